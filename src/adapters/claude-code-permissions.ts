// Whether a Claude Code session lets every Bash command run without asking.
// Then the Bash capture's wrapper runs as the command itself would have: no
// allow rule narrower than the whole tool has to name the wrapper's prologue
// (deny and ask rules read the command as typed, see bash-capture.ts). Read
// from what Claude Code itself reads: the permission rules of its settings
// files and of its command line (`--allowedTools`, `--settings`, which the
// Agent SDK passes too).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readSettingsText } from '../spill/regular-file';
import { claudeSettingsPath } from './settings-install';

/** Allow rules that name every Bash command. */
const WHOLE_BASH = new Set(['Bash', 'Bash(*)']);

interface Settings {
  permissions?: { allow?: unknown };
  allowManagedPermissionRulesOnly?: unknown;
}

/**
 * Whether the rules of the Claude Code session a hook runs in (its project folder `projectDir`) allow Bash
 * whole. False when unsure: a file that does not parse counts for nothing, and a policy that allows only its
 * own rules (`allowManagedPermissionRulesOnly`) leaves the others out, as Claude Code does.
 */
export async function bashAllowedWhole(projectDir: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const managed = await readSettings(managedSettingsFile());
  const rules = allowRules(managed);
  if (managed?.allowManagedPermissionRulesOnly !== true) {
    const args = claudeArgs(env);
    for (const settings of await Promise.all([...settingsFiles(projectDir, env).map(readSettings), ...settingsArgs(args)])) rules.push(...allowRules(settings));
    rules.push(...allowedToolsArgs(args));
  }
  return rules.some((rule) => typeof rule === 'string' && WHOLE_BASH.has(rule.trim()));
}

function allowRules(settings: Settings | undefined): unknown[] {
  return Array.isArray(settings?.permissions?.allow) ? [...settings.permissions.allow] : [];
}

function managedSettingsFile(): string {
  return process.platform === 'darwin' ? '/Library/Application Support/ClaudeCode/managed-settings.json' : '/etc/claude-code/managed-settings.json';
}

/** The user's settings, then the project's shared and local ones (where `spillway hook install` writes them). */
function settingsFiles(projectDir: string, env: NodeJS.ProcessEnv): string[] {
  const shared = claudeSettingsPath({ kind: 'project', dir: env.CLAUDE_PROJECT_DIR || projectDir }, env);
  return [claudeSettingsPath({ kind: 'user' }, env), shared, path.join(path.dirname(shared), 'settings.local.json')];
}

/** A settings file parsed; undefined when missing, not a regular file (a FIFO never blocks), or not an object. */
async function readSettings(file: string): Promise<Settings | undefined> {
  return parseSettings(await readSettingsText(file).catch(() => ''));
}

function parseSettings(text: string): Settings | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Settings) : undefined;
  } catch {
    return undefined; // no rules from it
  }
}

/**
 * Claude Code's own command line, which a hook's environment names (`CLAUDE_PID`); read from /proc (Linux).
 * Elsewhere none is read, and only the settings files count.
 */
function claudeArgs(env: NodeJS.ProcessEnv): string[] {
  if (!/^\d+$/.test(env.CLAUDE_PID ?? '')) return [];
  try {
    return readFileSync(`/proc/${env.CLAUDE_PID}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '');
  } catch {
    return [];
  }
}

/** The values of an option given as `--name value...` (up to the next option) or `--name=value`, for each of its names. */
function optionValues(args: readonly string[], names: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const name = names.find((n) => arg === n || arg.startsWith(`${n}=`));
    if (!name) continue;
    if (arg !== name) values.push(arg.slice(name.length + 1));
    else while (i + 1 < args.length && !args[i + 1]!.startsWith('-')) values.push(args[++i]!);
  }
  return values;
}

/** `--allowedTools "Bash Read"`, `--allowedTools Bash,Read`, `--allowed-tools=Bash(git:*)`: each rule. */
export function allowedToolsArgs(args: readonly string[]): string[] {
  return optionValues(args, ['--allowedTools', '--allowed-tools']).flatMap(splitRules);
}

/** A list of rules split at commas and spaces outside parentheses (`Bash(npm run test:*)` is one rule). */
function splitRules(list: string): string[] {
  const rules: string[] = [];
  let depth = 0;
  let rule = '';
  for (const ch of list) {
    if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
      if (rule) rules.push(rule);
      rule = '';
      continue;
    }
    if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    rule += ch;
  }
  if (rule) rules.push(rule);
  return rules;
}

/** `--settings FILE` or `--settings '{json}'`, each read. */
function settingsArgs(args: readonly string[]): Array<Promise<Settings | undefined>> {
  return optionValues(args, ['--settings']).map((value) => (value.trim().startsWith('{') ? Promise.resolve(parseSettings(value)) : readSettings(value)));
}
