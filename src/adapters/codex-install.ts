// `spillway hook install|uninstall codex`: Spillway's PreToolUse, PostToolUse
// and Stop entries in a Codex hooks.json (`$CODEX_HOME/hooks.json`, or
// `DIR/.codex/hooks.json`): PreToolUse wraps the command, PostToolUse moves its
// capture out of the sandbox's reach (codex-mover.ts), Stop sends the rollout
// to a configured bucket as it stands at the turn's end. Only when asked
// (`--trust`), the trust records Codex wants before it runs a hook
// (`[hooks.state."<hooks.json>:<event>:G:H"] trusted_hash`, in the user's
// config.toml). Uninstall gives both files back byte for byte: the
// hooks.json from the copy taken at install (when nothing else changed in it
// since), the config.toml by cutting out exactly the block that was added.
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookGroup, matcherLabel, underMatcher } from './hook-group';
import { shellQuote } from './shell-quote';
import { replaceFile } from './replace-file';

export type CodexScope = { kind: 'user' } | { kind: 'project'; dir: string };

export interface CodexInstallResult {
  /** What happened, one line each, for the user. */
  changes: string[];
}

/** Codex waits for the hook at most this many seconds. */
export const CODEX_HOOK_TIMEOUT_SECONDS = 30;
/**
 * The events Spillway hooks, with the names Codex uses in trust keys and their matcher (Stop takes none: its
 * group has no matcher key, and its trust hash none either).
 */
const EVENTS = [
  { name: 'PreToolUse', key: 'pre_tool_use', matcher: 'Bash' },
  { name: 'PostToolUse', key: 'post_tool_use', matcher: 'Bash' },
  { name: 'Stop', key: 'stop', matcher: undefined },
] as const;
type HookEvent = (typeof EVENTS)[number];
const OUR_COMMAND = /(?:^|[\s/'"])(?:codex-hook\.js['"]?\s+codex|hook['"]?\s+codex)\s*$/;
const TRUST_BEGIN = '# >>> spillway: trust for its Codex hook (spillway hook uninstall codex removes this block)';
const TRUST_END = '# <<< spillway';

interface HookGroup {
  matcher?: string;
  hooks?: Array<{ type?: string; command?: string; timeout?: number; [k: string]: unknown }>;
  [k: string]: unknown;
}
type HooksFile = Record<string, unknown> & { hooks?: Record<string, unknown> };

export function codexHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.CODEX_HOME?.trim();
  return home ? path.resolve(home) : path.join(env.HOME?.trim() || os.homedir(), '.codex');
}

export function codexHooksPath(scope: CodexScope, env: NodeJS.ProcessEnv = process.env): string {
  return scope.kind === 'project' ? path.join(path.resolve(scope.dir), '.codex', 'hooks.json') : path.join(codexHome(env), 'hooks.json');
}

/** The hook command: this Node and the lean hook script, by absolute path (Codex runs it through a shell). */
export function defaultCodexHookCommand(script: string, nodePath: string = process.execPath): string {
  const lean = path.basename(script) === 'codex-hook.js';
  return `${shellQuote(nodePath)} ${shellQuote(path.resolve(script))} ${lean ? 'codex' : 'hook codex'}`;
}

export function isSpillwayCodexCommand(command: unknown): boolean {
  return typeof command === 'string' && OUR_COMMAND.test(command);
}

/**
 * The hash Codex records for a trusted hook: sha256 of the compact JSON, keys
 * sorted, of `{event_name, hooks: [handler], matcher}` with the handler's
 * defaults filled in (checked against Codex 0.169.0: a hook trusted with this
 * hash runs, any other is skipped).
 */
export function codexTrustHash(event: string, matcher: string | undefined, command: string, timeout: number): string {
  const identity = { event_name: event, hooks: [{ async: false, command, timeout, type: 'command' }], ...(matcher !== undefined ? { matcher } : {}) };
  return `sha256:${createHash('sha256').update(canonicalJson(identity)).digest('hex')}`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export async function installCodexHook(hooksPath: string, command: string, opts: { trust: boolean; configPath: string }): Promise<CodexInstallResult> {
  if (!isSpillwayCodexCommand(command)) throw new Error(`the hook command must end with 'codex-hook.js codex' or 'hook codex'`);
  const { text, value } = await readHooks(hooksPath);
  const changes: string[] = [];
  const found = EVENTS.map((event) => {
    const groups = groupsOf(value, event, hooksPath);
    const at = groups.findIndex((g) => (g.hooks ?? []).some((h) => isSpillwayCodexCommand(h.command)));
    return { event, groups, at };
  });
  const isOurs = (g: HookGroup | undefined, event: HookEvent) =>
    g !== undefined && underMatcher(g, event.matcher) && g.hooks?.length === 1 && g.hooks[0]!.command === command && g.hooks[0]!.timeout === CODEX_HOOK_TIMEOUT_SECONDS;
  const trustKeys: Array<{ key: string; hash: string; event: HookEvent }> = [];
  if (found.every((f) => isOurs(f.groups[f.at], f.event))) changes.push(`already installed in ${hooksPath}`);
  else {
    // The copy uninstall gives back: the file as it was before Spillway (never one holding an earlier install).
    if (text !== undefined && found.every((f) => f.at === -1)) await fsp.writeFile(backupOf(hooksPath), text, { mode: 0o600 });
    for (const f of found) {
      if (f.at !== -1) {
        f.groups.splice(f.at, 1);
        changes.push(`replaced an earlier Spillway ${f.event.name} entry`);
      }
      f.groups.push(hookGroup(f.event.matcher, [{ type: 'command', command, timeout: CODEX_HOOK_TIMEOUT_SECONDS }]));
      f.at = f.groups.length - 1;
      changes.push(`added ${f.event.name} hook (${matcherLabel(f.event.matcher)}): ${command}`);
    }
    await replaceFile(hooksPath, JSON.stringify(value, null, indentOf(text)) + '\n');
    changes.push(`wrote ${hooksPath}`);
  }
  for (const f of found) trustKeys.push({ event: f.event, key: `${hooksPath}:${f.event.key}:${f.at}:0`, hash: codexTrustHash(f.event.key, f.event.matcher, command, CODEX_HOOK_TIMEOUT_SECONDS) });
  if (opts.trust) changes.push(...(await recordTrust(opts.configPath, trustKeys)));
  else {
    changes.push(
      'Codex runs a new hook only once you trust it (`codex exec` skips it silently until then):',
      '  start `codex`, open /hooks ("Hooks need review") and trust the Spillway PreToolUse, PostToolUse and Stop hooks, or',
      `  run this install again with --trust to record it yourself in ${opts.configPath}:`,
      ...trustKeys.map((t) => `    [hooks.state."${t.key}"] trusted_hash = "${t.hash}"`),
    );
  }
  return { changes };
}

export async function uninstallCodexHook(hooksPath: string, configPath: string): Promise<CodexInstallResult> {
  const changes: string[] = [];
  const { text, value } = await readHooks(hooksPath);
  if (text === undefined) changes.push(`nothing to remove: ${hooksPath} does not exist`);
  else {
    let removedAny = false;
    for (const event of EVENTS) {
      const present = value.hooks?.[event.name] !== undefined;
      const groups = groupsOf(value, event, hooksPath);
      const kept = groups.filter((g) => !(g.hooks ?? []).some((h) => isSpillwayCodexCommand(h.command)));
      if (kept.length !== groups.length) removedAny = true;
      if (kept.length > 0 || (present && kept.length === groups.length)) value.hooks![event.name] = kept;
      else delete value.hooks![event.name];
    }
    if (Object.keys(value.hooks!).length === 0) delete value.hooks;
    if (!removedAny) changes.push(`no Spillway hook in ${hooksPath}`);
    else {
      const backup = await fsp.readFile(backupOf(hooksPath), 'utf8').catch(() => undefined);
      const backupValue = backup === undefined ? undefined : parseOr(backup);
      if (backup !== undefined && isDeepStrictEqual(backupValue, value)) {
        await replaceFile(hooksPath, backup);
        changes.push(`restored ${hooksPath} as it was before the install`);
      } else if (backup === undefined && Object.keys(value).length === 0) {
        await fsp.rm(hooksPath, { force: true });
        changes.push(`removed ${hooksPath} (Spillway had created it)`);
      } else {
        await replaceFile(hooksPath, JSON.stringify(value, null, indentOf(text)) + '\n');
        changes.push(`removed the Spillway hook entries from ${hooksPath} (the file was changed since the install, so it was rewritten)`);
      }
      await fsp.rm(backupOf(hooksPath), { force: true });
    }
  }
  changes.push(...(await removeTrust(configPath)));
  return { changes };
}

async function readHooks(file: string): Promise<{ text: string | undefined; value: HooksFile }> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { text: undefined, value: {} };
    throw err;
  }
  if (text.trim() === '') return { text, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not valid JSON (${(err as Error).message}); fix it first, nothing was changed`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${file} does not hold a JSON object; nothing was changed`);
  const hooks = (value as HooksFile).hooks;
  if (hooks !== undefined && (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks))) throw new Error(`${file}: "hooks" is not an object; nothing was changed`);
  return { text, value: value as HooksFile };
}

/** The event's groups (an empty list put in place when it has none). */
function groupsOf(value: HooksFile, event: HookEvent, file: string): HookGroup[] {
  value.hooks ??= {};
  const groups = value.hooks[event.name] ?? [];
  if (!Array.isArray(groups)) throw new Error(`${file}: "hooks.${event.name}" is not an array; nothing was changed`);
  value.hooks[event.name] = groups;
  return groups as HookGroup[];
}

function parseOr(text: string): unknown {
  try {
    return text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return undefined;
  }
}

const backupOf = (file: string): string => `${file}.spillway-backup`;

function indentOf(text: string | undefined): string {
  return (text && /^([ \t]+)\S/m.exec(text)?.[1]) ?? '  ';
}

/** Appends the trust block to config.toml (replacing an earlier Spillway block); refuses when the user's own table names a key. */
async function recordTrust(configPath: string, trust: Array<{ key: string; hash: string }>): Promise<string[]> {
  const before = await fsp.readFile(configPath, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  const base = before === undefined ? '' : withoutTrustBlock(before);
  const taken = trust.find((t) => base.includes(JSON.stringify(t.key)));
  if (taken) {
    return [`not recording trust: ${configPath} already has an entry for ${taken.key}; trust the hooks in Codex's /hooks instead`];
  }
  const tables = trust.map((t) => `[hooks.state.${JSON.stringify(t.key)}]\ntrusted_hash = ${JSON.stringify(t.hash)}\n`);
  const block = `${TRUST_BEGIN}\n${tables.join('')}${TRUST_END}\n`;
  // The block goes on a line of its own; a newline added for it is part of what uninstall removes.
  const joiner = base === '' || base.endsWith('\n') ? '' : '\n';
  const after = `${base}${joiner}${joiner ? TRUST_BEGIN.replace('# >>>', '# >>>+') : TRUST_BEGIN}${block.slice(TRUST_BEGIN.length)}`;
  if (after === before) return [`trust already recorded in ${configPath}`];
  await replaceFile(configPath, after);
  return trust.map((t) => `recorded trust for the hook in ${configPath}: [hooks.state.${JSON.stringify(t.key)}] trusted_hash = "${t.hash}"`);
}

/** config.toml without Spillway's trust block (and the newline it added before itself, marked `>>>+`). */
function withoutTrustBlock(text: string): string {
  const re = /(\n?)# >>>(\+?) spillway: trust for its Codex hook[^\n]*\n[\s\S]*?# <<< spillway\n?/;
  const m = re.exec(text);
  if (!m) return text;
  const keepNewline = m[1] === '\n' && m[2] !== '+' ? '\n' : '';
  return text.slice(0, m.index) + keepNewline + text.slice(m.index + m[0].length);
}

async function removeTrust(configPath: string): Promise<string[]> {
  const text = await fsp.readFile(configPath, 'utf8').catch(() => undefined);
  if (text === undefined) return [];
  const after = withoutTrustBlock(text);
  if (after === text) return [];
  if (after === '') {
    await fsp.rm(configPath, { force: true });
    return [`removed ${configPath} (it held only Spillway's trust record)`];
  }
  await replaceFile(configPath, after);
  return [`removed Spillway's trust record from ${configPath}`];
}
