// Adds or removes Spillway's hooks in a Gemini CLI settings.json (which may
// hold comments): AfterTool (a shell call's output) and AfterAgent (the
// session file sent to a bucket at each turn's end). Each entry is inserted
// as text between two marker comments, so every other byte stays as the user
// wrote it and uninstall cuts exactly those texts out again: the file comes
// back byte for byte. The file is replaced atomically (never half-written).
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { shellQuote } from './shell-quote';
import { JsoncError, memberOf, parseJsoncSpans, type JsoncNode } from './jsonc-spans';
import { readSettingsText } from '../spill/regular-file';
import { replaceFile } from './replace-file';

export const BEGIN_MARK = '/* spillway: begin */';
export const END_MARK = '/* spillway: end */';
/** The hook's name in Gemini's /hooks panel and in its trusted-hooks record. */
export const GEMINI_HOOK_NAME = 'spillway';
/** A file the install creates holds the entry alone; uninstall removes a file left as the rest of it. */
const NEW_FILE = (entry: string) => `{\n  ${entry}\n}\n`;
const NEW_FILE_REST = '{\n}\n';

export type GeminiScope = { kind: 'user' } | { kind: 'project'; dir: string };

export interface GeminiInstallResult {
  settingsPath: string;
  /** What happened, one line each, for the user. */
  changes: string[];
  changed: boolean;
}

/** `~/.gemini/settings.json` ($GEMINI_CLI_HOME in place of the home folder, as Gemini CLI reads it) or `DIR/.gemini/settings.json`. */
export function geminiSettingsPath(scope: GeminiScope, env: NodeJS.ProcessEnv = process.env): string {
  if (scope.kind === 'project') return path.join(path.resolve(scope.dir), '.gemini', 'settings.json');
  const home = env.GEMINI_CLI_HOME?.trim() || env.HOME?.trim() || os.homedir();
  return path.join(home, '.gemini', 'settings.json');
}

/** The command Gemini CLI runs: this Node binary and dist/gemini-cli-hook.js, by absolute path. */
export function defaultGeminiHookCommand(script: string, nodePath: string = process.execPath): string {
  return `${shellQuote(nodePath)} ${shellQuote(path.resolve(script))}`;
}

/** The hook definition Spillway adds to `hooks.AfterTool`, on one line. */
export function geminiHookEntry(command: string): string {
  return `{ "matcher": ${JSON.stringify('run_shell_command')}, "hooks": [${hookOf(command)}] }`;
}

/** The one Spillway adds to `hooks.AfterAgent` (no matcher: every turn's end). */
export function geminiAfterAgentEntry(command: string): string {
  return `{ "hooks": [${hookOf(command)}] }`;
}

function hookOf(command: string): string {
  return `{ "name": ${JSON.stringify(GEMINI_HOOK_NAME)}, "type": "command", "command": ${JSON.stringify(command)} }`;
}

/** `"hooks": {...}` holding each entry under its event: what the install adds where there is no `hooks` yet. */
function hooksMember(entries: Array<[event: string, entry: string]>): string {
  return `"hooks": {${entries.map(([event, entry]) => `"${event}": [${entry}]`).join(', ')}}`;
}

/** Each event Spillway hooks, with its entry, in the order they are inserted. */
function entriesFor(command: string): Array<[event: string, entry: string]> {
  return [
    ['AfterTool', geminiHookEntry(command)],
    ['AfterAgent', geminiAfterAgentEntry(command)],
  ];
}

export async function installGeminiHook(settingsPath: string, command: string): Promise<GeminiInstallResult> {
  const original = await readText(settingsPath);
  const entries = entriesFor(command);
  const spans = markedSpans(original ?? '', settingsPath);
  // An earlier install (another command, or an older Spillway's entries) is cut out and the entries put in afresh.
  const rest = cutSpans(original ?? '', spans);
  const next = rest.trim() === '' ? NEW_FILE(marked(hooksMember(entries))) : insertEntries(rest, entries, settingsPath);
  if (next === original) return { settingsPath, changes: [`already installed in ${settingsPath}`], changed: false };
  await replaceFile(settingsPath, next);
  return {
    settingsPath,
    changes: [
      ...(spans.length > 0 ? ['replaced the earlier Spillway hook entry'] : []),
      `added AfterTool hook (matcher "run_shell_command"): ${command}`,
      `added AfterAgent hook (sends the session file to SPILLWAY_STORE's bucket at each turn's end): ${command}`,
    ],
    changed: true,
  };
}

export async function uninstallGeminiHook(settingsPath: string): Promise<GeminiInstallResult> {
  const text = await readText(settingsPath);
  if (text === undefined) return { settingsPath, changes: [`nothing to remove: ${settingsPath} does not exist`], changed: false };
  const spans = markedSpans(text, settingsPath);
  if (spans.length === 0) return { settingsPath, changes: [`no Spillway hook in ${settingsPath}`], changed: false };
  const rest = cutSpans(text, spans);
  // A file the install created holds nothing else: it goes too.
  if (rest === NEW_FILE_REST) {
    await fsp.rm(settingsPath);
    return { settingsPath, changes: ['removed the Spillway hook entries', `removed ${settingsPath} (the install had created it)`], changed: true };
  }
  parseOrThrow(rest, settingsPath);
  await replaceFile(settingsPath, rest);
  return { settingsPath, changes: ['removed the Spillway hook entries'], changed: true };
}

function marked(text: string): string {
  return `${BEGIN_MARK} ${text} ${END_MARK}`;
}

/** Each marked insertion (from its leading newline and indentation to the end mark), first to last. */
function markedSpans(text: string, file: string): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  for (let begin = text.indexOf(BEGIN_MARK); begin >= 0; begin = text.indexOf(BEGIN_MARK, begin + 1)) {
    const end = text.indexOf(END_MARK, begin);
    if (end < 0) throw new Error(`${file}: Spillway's begin mark has no end mark; fix the file by hand, nothing was changed`);
    let start = begin;
    while (start > 0 && (text[start - 1] === ' ' || text[start - 1] === '\t')) start--;
    if (text[start - 1] === '\n') start--;
    spans.push({ start, end: end + END_MARK.length });
    begin = end;
  }
  return spans;
}

function cutSpans(text: string, spans: Array<{ start: number; end: number }>): string {
  let rest = text;
  for (const span of [...spans].reverse()) rest = rest.slice(0, span.start) + rest.slice(span.end);
  return rest;
}

/**
 * Each entry inserted where it belongs, first in `hooks.EVENT`, creating the key or `hooks` as needed. Each is
 * its own marked insertion, except in a `hooks` the install creates, which holds them all in one.
 */
function insertEntries(text: string, entries: Array<[event: string, entry: string]>, file: string): string {
  const top = parseOrThrow(text, file);
  if (top.kind !== 'object') throw new Error(`${file} does not hold a JSON object; nothing was changed`);
  const hooks = memberOf(top, 'hooks');
  if (hooks !== undefined && hooks.kind !== 'object') throw new Error(`${file}: "hooks" is not an object; nothing was changed`);
  for (const [event] of entries) {
    const list = memberOf(hooks, event);
    if (list !== undefined && list.kind !== 'array') throw new Error(`${file}: "hooks.${event}" is not an array; nothing was changed`);
  }
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? '  ';
  const at = (within: string, node: JsoncNode, inner: string, nonEmpty: boolean, depth: number) => {
    const insertion = `\n${indent.repeat(depth)}${marked(nonEmpty ? `${inner},` : inner)}`;
    return within.slice(0, node.start + 1) + insertion + within.slice(node.start + 1);
  };
  if (hooks === undefined) return at(text, top, hooksMember(entries), top.members.length > 0, 1);
  let next = text;
  // One at a time, each into the file as the previous insertion left it (its offsets moved).
  for (const [event, entry] of entries) {
    const nextHooks = memberOf(parseOrThrow(next, file), 'hooks');
    const list = memberOf(nextHooks, event);
    if (list?.kind === 'array') next = at(next, list, entry, list.items.length > 0, 3);
    else if (nextHooks?.kind === 'object') next = at(next, nextHooks, `"${event}": [${entry}]`, nextHooks.members.length > 0, 2);
  }
  return next;
}

function parseOrThrow(text: string, file: string): JsoncNode {
  try {
    return parseJsoncSpans(text);
  } catch (err) {
    if (err instanceof JsoncError) throw new Error(`${file} is not valid JSON (${err.message}); fix it first, nothing was changed`);
    throw err;
  }
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readSettingsText(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
