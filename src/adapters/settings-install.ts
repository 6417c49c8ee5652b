// Adds or removes Spillway in a Claude Code settings.json: the shell prefix
// that captures Bash output (env.CLAUDE_CODE_SHELL_PREFIX, claude-code-prefix-install.ts),
// the PostToolUse hook on the other tools whose output can be large and the
// Stop hook that sends the transcript to a configured bucket at each turn's
// end, merging with whatever else is there. Idempotent; an older install (with its
// PreToolUse/PostToolUseFailure Bash hooks) is upgraded in place; the user's
// indentation is kept; the file is replaced atomically (never half-written);
// uninstall gives back the file as it was before, byte for byte, when nothing
// else in it changed since.
import { constants as C, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookGroup, matcherLabel, underMatcher } from './hook-group';
import { shellQuote } from './shell-quote';
import { addShellPrefix, removeShellPrefix } from './claude-code-prefix-install';
import { readSettingsText } from '../spill/regular-file';
import { replaceFile } from './replace-file';

export { shellQuote };

/**
 * Tools whose output can be large; Read is left out on purpose (no read -> spill -> read loop), and Bash
 * too: its output is digested by the shell prefix before Claude Code reads it, failing or not.
 */
export const CLAUDE_CODE_HOOK_MATCHER = 'BashOutput|Grep|Glob|WebFetch|WebSearch|Task|Agent|mcp__.*';

/** Every event Spillway hooks, with its matcher (Stop takes none: its group has no matcher key). */
export const CLAUDE_CODE_HOOK_EVENTS: ReadonlyArray<{ event: string; matcher?: string }> = [
  { event: 'PostToolUse', matcher: CLAUDE_CODE_HOOK_MATCHER },
  { event: 'Stop' },
];

/** Events an older Spillway hooked too: checked like the others so that an upgrade can remove them. */
const EARLIER_EVENTS = ['PreToolUse', 'PostToolUseFailure'];

/** Claude Code waits for a command hook at most this many seconds. */
const HOOK_TIMEOUT_SECONDS = 30;

/**
 * How Spillway finds its own entries again: the command ends with
 * `hook claude-code` (the CLI) or `hook.js claude-code` (the lean entry).
 */
const OUR_COMMAND = /(?:^|[\s/'"])hook(?:\.js)?['"]?\s+claude-code\s*$/;

export type SettingsScope = { kind: 'user' } | { kind: 'project'; dir: string };

export interface InstallResult {
  settingsPath: string;
  /** What happened, one line each, for the user. */
  changes: string[];
  changed: boolean;
  backupPath?: string;
}

interface CommandHook {
  type: string;
  command?: string;
  timeout?: number;
  [key: string]: unknown;
}
interface MatcherGroup {
  matcher?: string;
  hooks?: CommandHook[];
  [key: string]: unknown;
}
type Settings = Record<string, unknown> & { hooks?: Record<string, MatcherGroup[]> };

export function claudeSettingsPath(scope: SettingsScope, env: NodeJS.ProcessEnv = process.env): string {
  if (scope.kind === 'project') return path.join(path.resolve(scope.dir), '.claude', 'settings.json');
  const configDir = env.CLAUDE_CONFIG_DIR?.trim() || path.join(env.HOME?.trim() || os.homedir(), '.claude');
  return path.join(configDir, 'settings.json');
}

/**
 * The command Claude Code runs: this Node binary and the hook script by
 * absolute path, so it works without `spillway` on PATH and without npx's
 * registry lookup. `script` is dist/hook.js (lean) or dist/cli.js.
 */
export function defaultHookCommand(script: string, nodePath: string = process.execPath): string {
  const lean = path.basename(script) === 'hook.js';
  return `${shellQuote(nodePath)} ${shellQuote(path.resolve(script))} ${lean ? 'claude-code' : 'hook claude-code'}`;
}

export function isSpillwayHookCommand(command: unknown): boolean {
  return typeof command === 'string' && OUR_COMMAND.test(command);
}

/**
 * `prefix`: the CLAUDE_CODE_SHELL_PREFIX value that captures Bash output (claude-code-prefix-install.ts);
 * undefined installs the PostToolUse hook alone.
 */
export async function installClaudeCodeHook(settingsPath: string, command: string, prefix?: string): Promise<InstallResult> {
  if (!isSpillwayHookCommand(command)) throw new Error(`the hook command must end with 'hook claude-code' or 'hook.js claude-code'`);
  const { settings, existed, indent } = await readSettings(settingsPath);
  const changes: string[] = [];
  const ours = countOurs(settings);
  const before = JSON.stringify(settings);
  const complete = CLAUDE_CODE_HOOK_EVENTS.every(({ event, matcher }) =>
    eventGroups(settings, event).some((g) => underMatcher(g, matcher) && (g.hooks ?? []).some((h) => h.command === command)),
  );
  if (!complete || ours !== CLAUDE_CODE_HOOK_EVENTS.length) {
    if (ours > 0) {
      removeOurs(settings);
      changes.push(`replaced ${ours} earlier Spillway hook entr${ours === 1 ? 'y' : 'ies'}`);
    }
    for (const { event, matcher } of CLAUDE_CODE_HOOK_EVENTS) {
      eventGroups(settings, event, true).push(hookGroup(matcher, [{ type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS }]));
      changes.push(`added ${event} hook (${matcherLabel(matcher)}): ${command}`);
    }
  }
  const hadPrefix = removeShellPrefix(structuredClone(settings)).length > 0;
  if (prefix !== undefined) changes.push(...addShellPrefix(settings, prefix));
  if (JSON.stringify(settings) === before) return { settingsPath, changes: [`already installed in ${settingsPath}`], changed: false };
  // A backup only of a file Spillway was not in yet: never one holding an installed version.
  const backupPath = await writeSettings(settingsPath, settings, existed, indent, ours === 0 && !hadPrefix ? 'backup' : 'none');
  return { settingsPath, changes, changed: true, ...(backupPath ? { backupPath } : {}) };
}

export async function uninstallClaudeCodeHook(settingsPath: string): Promise<InstallResult> {
  const { settings, existed, indent } = await readSettings(settingsPath);
  if (!existed) return { settingsPath, changes: [`nothing to remove: ${settingsPath} does not exist`], changed: false };
  const removed = removeOurs(settings);
  const prefixChanges = removeShellPrefix(settings);
  if (removed === 0 && prefixChanges.length === 0) return { settingsPath, changes: [`no Spillway hook in ${settingsPath}`], changed: false };
  const changes = [...(removed > 0 ? [`removed ${removed} Spillway hook entr${removed === 1 ? 'y' : 'ies'}`] : []), ...prefixChanges];
  // The file is Spillway-free again: the install's backup, when it holds just that, comes back byte for byte.
  if (await restoreBackup(settingsPath, settings)) return { settingsPath, changes: [...changes, 'restored the file as it was before the install'], changed: true };
  await writeSettings(settingsPath, settings, existed, indent, 'remove');
  return { settingsPath, changes, changed: true };
}

/** Puts the install's backup back when it parses to exactly `settings`; false (nothing done) otherwise. */
async function restoreBackup(settingsPath: string, settings: Settings): Promise<boolean> {
  const backupPath = `${settingsPath}.spillway-backup`;
  let text: string;
  try {
    text = await readSettingsText(backupPath);
  } catch {
    return false;
  }
  let saved: unknown;
  try {
    saved = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return false;
  }
  if (!sameJson(saved, settings)) return false;
  await replaceFile(settingsPath, text);
  await fsp.rm(backupPath, { force: true });
  return true;
}

/** Deep equality of parsed JSON values, key order aside. */
function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

async function readSettings(settingsPath: string): Promise<{ settings: Settings; existed: boolean; indent: string }> {
  let text: string;
  try {
    text = await readSettingsText(settingsPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { settings: {}, existed: false, indent: DEFAULT_INDENT };
    throw err;
  }
  if (text.trim() === '') return { settings: {}, existed: true, indent: DEFAULT_INDENT };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${settingsPath} is not valid JSON (${(err as Error).message}); fix it first, nothing was changed`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`${settingsPath} does not hold a JSON object; nothing was changed`);
  }
  const settings = value as Settings;
  if (settings.hooks !== undefined && (typeof settings.hooks !== 'object' || settings.hooks === null || Array.isArray(settings.hooks))) {
    throw new Error(`${settingsPath}: "hooks" is not an object; nothing was changed`);
  }
  for (const event of [...CLAUDE_CODE_HOOK_EVENTS.map((e) => e.event), ...EARLIER_EVENTS]) {
    if (settings.hooks?.[event] !== undefined && !Array.isArray(settings.hooks[event])) {
      throw new Error(`${settingsPath}: "hooks.${event}" is not an array; nothing was changed`);
    }
  }
  return { settings, existed: true, indent: indentOf(text) };
}

const DEFAULT_INDENT = '  ';

/** The indentation of the file's first indented line (a one-line file gets the default). */
function indentOf(text: string): string {
  return /^([ \t]+)\S/m.exec(text)?.[1] ?? DEFAULT_INDENT;
}

function eventGroups(settings: Settings, event: string, create = false): MatcherGroup[] {
  if (!settings.hooks) {
    if (!create) return [];
    settings.hooks = {};
  }
  if (!settings.hooks[event]) {
    if (!create) return [];
    settings.hooks[event] = [];
  }
  return settings.hooks[event];
}

function countOurs(settings: Settings): number {
  let n = 0;
  for (const event of Object.keys(settings.hooks ?? {})) {
    const groups = settings.hooks![event];
    if (!Array.isArray(groups)) continue;
    for (const g of groups) for (const h of Array.isArray(g.hooks) ? g.hooks : []) if (isSpillwayHookCommand(h.command)) n++;
  }
  return n;
}

/** Removes Spillway's entries only, from every event; a group or key left empty by that goes too. */
function removeOurs(settings: Settings): number {
  const removed = countOurs(settings);
  if (removed === 0 || !settings.hooks) return 0;
  for (const event of Object.keys(settings.hooks)) {
    const groups = settings.hooks[event];
    if (!Array.isArray(groups)) continue;
    const kept: MatcherGroup[] = [];
    for (const g of groups) {
      if (!Array.isArray(g.hooks)) {
        kept.push(g);
        continue;
      }
      const hooks = g.hooks.filter((h) => !isSpillwayHookCommand(h.command));
      if (hooks.length > 0) kept.push({ ...g, hooks });
      else if (hooks.length === g.hooks.length) kept.push(g);
    }
    if (kept.length > 0) settings.hooks[event] = kept;
    else delete settings.hooks[event];
  }
  if (Object.keys(settings.hooks).length === 0) delete settings.hooks;
  return removed;
}

/**
 * Writes a temp file and renames it over. `backup`: copy the old file to
 * `<file>.spillway-backup` first; `remove`: delete that copy after writing.
 */
async function writeSettings(settingsPath: string, settings: Settings, existed: boolean, indent: string, backup: 'backup' | 'none' | 'remove'): Promise<string | undefined> {
  const backupPath = `${settingsPath}.spillway-backup`;
  if (existed && backup === 'backup') {
    await fsp.rm(backupPath, { force: true });
    await fsp.copyFile(settingsPath, backupPath, C.COPYFILE_EXCL);
  }
  await replaceFile(settingsPath, JSON.stringify(settings, null, indent) + '\n');
  if (backup === 'remove') await fsp.rm(backupPath, { force: true });
  return existed && backup === 'backup' ? backupPath : undefined;
}
