// Adds or removes Spillway's AfterTool hook in a Gemini CLI settings.json
// (which may hold comments). The entry is inserted as text between two
// marker comments, so every other byte stays as the user wrote it and
// uninstall cuts exactly that text out again: the file comes back byte for
// byte. The file is replaced atomically (never half-written).
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
  const q = (text: string) => JSON.stringify(text);
  return `{ "matcher": ${q('run_shell_command')}, "hooks": [{ "name": ${q(GEMINI_HOOK_NAME)}, "type": "command", "command": ${q(command)} }] }`;
}

export async function installGeminiHook(settingsPath: string, command: string): Promise<GeminiInstallResult> {
  const original = await readText(settingsPath);
  const entry = geminiHookEntry(command);
  let text = original ?? '';
  const changes: string[] = [];
  const existing = markedSpan(text, settingsPath);
  if (existing) {
    if (text.slice(existing.start, existing.end).includes(entry)) return { settingsPath, changes: [`already installed in ${settingsPath}`], changed: false };
    text = text.slice(0, existing.start) + text.slice(existing.end);
    changes.push('replaced the earlier Spillway hook entry');
  }
  const next = text.trim() === '' ? NEW_FILE(marked(`"hooks": {"AfterTool": [${entry}]}`)) : insertEntry(text, entry, settingsPath);
  await replaceFile(settingsPath, next);
  changes.push(`added AfterTool hook (matcher "run_shell_command"): ${command}`);
  return { settingsPath, changes, changed: true };
}

export async function uninstallGeminiHook(settingsPath: string): Promise<GeminiInstallResult> {
  const text = await readText(settingsPath);
  if (text === undefined) return { settingsPath, changes: [`nothing to remove: ${settingsPath} does not exist`], changed: false };
  const span = markedSpan(text, settingsPath);
  if (!span) return { settingsPath, changes: [`no Spillway hook in ${settingsPath}`], changed: false };
  const rest = text.slice(0, span.start) + text.slice(span.end);
  // A file the install created holds nothing else: it goes too.
  if (rest === NEW_FILE_REST) {
    await fsp.rm(settingsPath);
    return { settingsPath, changes: ['removed the Spillway hook entry', `removed ${settingsPath} (the install had created it)`], changed: true };
  }
  parseOrThrow(rest, settingsPath);
  await replaceFile(settingsPath, rest);
  return { settingsPath, changes: ['removed the Spillway hook entry'], changed: true };
}

function marked(text: string): string {
  return `${BEGIN_MARK} ${text} ${END_MARK}`;
}

/** The marked insertion (from its leading newline and indentation to the end mark), or undefined. */
function markedSpan(text: string, file: string): { start: number; end: number } | undefined {
  const begin = text.indexOf(BEGIN_MARK);
  if (begin < 0) return undefined;
  const end = text.indexOf(END_MARK, begin);
  if (end < 0) throw new Error(`${file}: Spillway's begin mark has no end mark; fix the file by hand, nothing was changed`);
  let start = begin;
  while (start > 0 && (text[start - 1] === ' ' || text[start - 1] === '\t')) start--;
  if (text[start - 1] === '\n') start--;
  return { start, end: end + END_MARK.length };
}

/** The entry inserted where it belongs: first in `hooks.AfterTool`, creating the key or `hooks` as needed. */
function insertEntry(text: string, entry: string, file: string): string {
  const top = parseOrThrow(text, file);
  if (top.kind !== 'object') throw new Error(`${file} does not hold a JSON object; nothing was changed`);
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? '  ';
  const hooks = memberOf(top, 'hooks');
  if (hooks !== undefined && hooks.kind !== 'object') throw new Error(`${file}: "hooks" is not an object; nothing was changed`);
  const afterTool = memberOf(hooks, 'AfterTool');
  if (afterTool !== undefined && afterTool.kind !== 'array') throw new Error(`${file}: "hooks.AfterTool" is not an array; nothing was changed`);
  const at = (node: JsoncNode, inner: string, nonEmpty: boolean, depth: number) => {
    const insertion = `\n${indent.repeat(depth)}${marked(nonEmpty ? `${inner},` : inner)}`;
    return text.slice(0, node.start + 1) + insertion + text.slice(node.start + 1);
  };
  if (afterTool?.kind === 'array') return at(afterTool, entry, afterTool.items.length > 0, 3);
  if (hooks?.kind === 'object') return at(hooks, `"AfterTool": [${entry}]`, hooks.members.length > 0, 2);
  return at(top, `"hooks": {"AfterTool": [${entry}]}`, top.members.length > 0, 1);
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
