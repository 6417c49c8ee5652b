// `spillway hook install|uninstall opencode`: lists Spillway's plugin
// (dist/opencode-plugin.js, as a file:// URL) in the `plugin` array of the
// user's or a project's opencode.json(c). The file is edited as text: comments,
// order and formatting stay, install adds only the bytes of one entry, and
// uninstall takes exactly those out again, so the file is restored byte for byte.
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { readSettingsText } from '../spill/regular-file';
import { scanTopLevel, skipBlank } from './jsonc-edit';
import type { InstallResult, SettingsScope } from './settings-install';
import { replaceFile } from './replace-file';

/** What a file created by install holds; uninstall deletes a file that holds exactly this again. */
const createdText = (literal: string): string => `{\n  "plugin": [\n    ${literal}\n  ]\n}\n`;

/** A plugin entry that is Spillway's (any install location). */
const OUR_ENTRY = /"file:\/\/[^"\n]*\/opencode-plugin\.js"/g;

/** The user's opencode.jsonc or opencode.json (whichever exists; opencode.json when neither). */
export function opencodeConfigPath(scope: SettingsScope, env: NodeJS.ProcessEnv = process.env): string {
  const dir =
    scope.kind === 'project'
      ? path.resolve(scope.dir)
      : path.join(env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME?.trim() || os.homedir(), '.config'), 'opencode');
  const jsonc = path.join(dir, 'opencode.jsonc');
  return existsSync(jsonc) ? jsonc : path.join(dir, 'opencode.json');
}

export function opencodePluginUrl(pluginFile: string): string {
  return pathToFileURL(path.resolve(pluginFile)).href;
}

async function readText(configPath: string): Promise<string | undefined> {
  try {
    return await readSettingsText(configPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function installOpencodePlugin(configPath: string, url: string): Promise<InstallResult> {
  const literal = JSON.stringify(url);
  const text = await readText(configPath);
  if (text === undefined) {
    await replaceFile(configPath, createdText(literal));
    return { settingsPath: configPath, changes: [`created ${configPath} with the plugin ${url}`], changed: true };
  }
  const ours = text.match(OUR_ENTRY) ?? [];
  if (ours.length === 1 && ours[0] === literal) return { settingsPath: configPath, changes: [`already installed in ${configPath}`], changed: false };
  if (ours.length > 0) {
    // An install from another location: its entry now names this one.
    const next = text.replace(OUR_ENTRY, literal);
    checkPlugins(configPath, next, literal);
    await replaceFile(configPath, next);
    return { settingsPath: configPath, changes: [`replaced the earlier Spillway plugin entry with ${url}`], changed: true };
  }
  const top = parsed(configPath, text);
  const plugin = top.keys.get('plugin');
  let next: string;
  if (plugin) {
    if (text[plugin.valueStart] !== '[') throw new Error(`${configPath}: "plugin" is not an array; nothing was changed`);
    const at = plugin.valueStart + 1;
    const empty = text[skipBlank(text, at)] === ']';
    next = text.slice(0, at) + (empty ? literal : `${literal}, `) + text.slice(at);
  } else {
    const at = top.open + 1;
    const indent = indentOf(text);
    // A key of its own spans lines, unlike an entry added to an empty list (`["..."]`): uninstall tells them apart.
    const key = `\n${indent}"plugin": [\n${indent}${indent}${literal}\n${indent}]`;
    next = text.slice(0, at) + key + (top.empty ? '\n' : ',') + text.slice(at);
  }
  checkPlugins(configPath, next, literal);
  await replaceFile(configPath, next);
  return { settingsPath: configPath, changes: [`added the plugin ${url} to "plugin" in ${configPath}`], changed: true };
}

export async function uninstallOpencodePlugin(configPath: string): Promise<InstallResult> {
  const text = await readText(configPath);
  if (text === undefined) return { settingsPath: configPath, changes: [`nothing to remove: ${configPath} does not exist`], changed: false };
  const entries = text.match(OUR_ENTRY) ?? [];
  if (entries.length === 0) return { settingsPath: configPath, changes: [`no Spillway plugin in ${configPath}`], changed: false };
  if (entries.length === 1 && text === createdText(entries[0]!)) {
    await fsp.rm(configPath);
    return { settingsPath: configPath, changes: [`removed ${configPath} (install had created it)`], changed: true };
  }
  let next = text;
  for (const literal of new Set(entries)) next = removeEntry(next, literal);
  parsed(configPath, next);
  await replaceFile(configPath, next);
  return { settingsPath: configPath, changes: [`removed the Spillway plugin from ${configPath}`], changed: true };
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Takes out what install added for `literal` (the forms install writes first, then the entry with its comma). */
function removeEntry(text: string, literal: string): string {
  const l = escapeRegExp(literal);
  for (const form of [new RegExp(`\\n([ \\t]*)"plugin": \\[\\n\\1\\1${l}\\n\\1\\](?:,|\\n)`), new RegExp(`${l}, `), new RegExp(`,\\s*${l}`), new RegExp(`${l}\\s*,?`)]) {
    if (form.test(text)) return text.replace(form, '');
  }
  return text;
}

function parsed(configPath: string, text: string) {
  try {
    return scanTopLevel(text);
  } catch (err) {
    throw new Error(`${configPath} ${(err as Error).message}; fix it first, nothing was changed`);
  }
}

/** The edited text must still be one object with a "plugin" array holding the entry. */
function checkPlugins(configPath: string, text: string, literal: string): void {
  const plugin = parsed(configPath, text).keys.get('plugin');
  if (!plugin || text[plugin.valueStart] !== '[' || !text.includes(literal)) throw new Error(`${configPath}: could not add the plugin entry; nothing was changed`);
}

function indentOf(text: string): string {
  return /^([ \t]+)\S/m.exec(text)?.[1] ?? '  ';
}
