// `hook install|uninstall gemini-cli` on real settings files: the user's bytes,
// comments and formatting stay; uninstall gives the file back byte for byte.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BEGIN_MARK, geminiAfterAgentEntry, geminiHookEntry, geminiSettingsPath, installGeminiHook, uninstallGeminiHook } from '../../../src/adapters/gemini-cli-install';
import { parseJsoncSpans } from '../../../src/adapters/jsonc-spans';

const COMMAND = "'/usr/bin/node' '/opt/spillway/dist/gemini-cli-hook.js'";
let dir: string;
let file: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-gemini-install-'));
  file = path.join(dir, '.gemini', 'settings.json');
  fs.mkdirSync(path.dirname(file));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Settings as Gemini CLI reads them (comments stripped by a JSONC reader: here, by parsing spans and evaluating). */
function loaded(text: string): any {
  return new Function(`return (${text});`)();
}

const SHAPES: Record<string, string> = {
  'no hooks, comments and four-space indents': '{\n    // my own settings\n    "security": {"auth": {"selectedType": "gemini-api-key"}}, /* trailing */\n    "ui": { "theme": "GitHub" }\n}\n',
  'hooks without AfterTool': '{\n\t"hooks": {\n\t\t"BeforeTool": [ { "matcher": "write_file", "hooks": [ { "type": "command", "command": "audit" } ] } ]\n\t}\n}',
  'an AfterTool list of the user\'s own': '{"hooks":{"AfterTool":[{"matcher":"read_file","hooks":[{"type":"command","command":"mine"}]}]},"general":{"vimMode":true}}\n',
  'empty AfterTool and hooks objects': '{ "hooks": { "AfterTool": [] } }',
  'an AfterAgent list of the user\'s own and no AfterTool': '{\n  "hooks": {\n    "AfterAgent": [{"hooks": [{"type": "command", "command": "notify-done"}]}]\n  }\n}\n',
  'an empty object': '{}',
  'strings that look like comments or hold escaped quotes': '{\n  "mcpServers": {"web": {"url": "http://127.0.0.1:8080/mcp // not a comment", "note": "/* nor this */ \\" and a quote"}},\n  "hooks": {"Notification": []}\n}\n',
  'CRLF line ends and a block comment before the object': '/* managed by dotfiles */\r\n{\r\n  "hooks": {\r\n    "AfterTool": [\r\n      {"matcher": "web_fetch", "hooks": [{"type": "command", "command": "log-fetch"}]}\r\n    ]\r\n  }\r\n}\r\n',
};

describe('hook install gemini-cli', () => {
  it.each(Object.entries(SHAPES))('%s: install adds the entry where Gemini reads it, uninstall restores the file byte for byte', async (_name, original) => {
    fs.writeFileSync(file, original);
    const result = await installGeminiHook(file, COMMAND);
    expect(result.changed).toBe(true);
    const installed = fs.readFileSync(file, 'utf8');
    parseJsoncSpans(installed);
    const settings = loaded(installed);
    const afterTool = settings.hooks.AfterTool as Array<{ matcher: string; hooks: Array<{ command: string; name: string }> }>;
    expect(afterTool[0]).toEqual(JSON.parse(geminiHookEntry(COMMAND)));
    expect(afterTool[0]!.hooks[0]!.command).toBe(COMMAND);
    expect(settings.hooks.AfterAgent[0]).toEqual(JSON.parse(geminiAfterAgentEntry(COMMAND)));
    // Everything the user had is still there.
    const before = loaded(original);
    for (const key of Object.keys(before)) if (key !== 'hooks') expect(settings[key]).toEqual(before[key]);
    const ours = new Set(['AfterTool', 'AfterAgent']);
    for (const [event, list] of Object.entries(before.hooks ?? {})) expect(settings.hooks[event].slice(ours.has(event) ? 1 : 0)).toEqual(list);
    expect((await installGeminiHook(file, COMMAND)).changes[0]).toMatch(/already installed/);
    const removed = await uninstallGeminiHook(file);
    expect(removed.changed).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });

  it('creates a missing file, and uninstall removes it again', async () => {
    await installGeminiHook(file, COMMAND);
    expect(loaded(fs.readFileSync(file, 'utf8')).hooks.AfterTool).toHaveLength(1);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    await uninstallGeminiHook(file);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('replaces an entry with another command in place, once', async () => {
    const original = '{\n  "hooks": {}\n}\n';
    fs.writeFileSync(file, original);
    await installGeminiHook(file, COMMAND);
    const result = await installGeminiHook(file, "'/other/node' '/new/gemini-cli-hook.js'");
    expect(result.changes[0]).toMatch(/replaced/);
    const text = fs.readFileSync(file, 'utf8');
    expect(text.split(BEGIN_MARK)).toHaveLength(3);
    expect(loaded(text).hooks.AfterTool.map((e: any) => e.hooks[0].command)).toEqual(["'/other/node' '/new/gemini-cli-hook.js'"]);
    expect(loaded(text).hooks.AfterAgent.map((e: any) => e.hooks[0].command)).toEqual(["'/other/node' '/new/gemini-cli-hook.js'"]);
    await uninstallGeminiHook(file);
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });

  it("upgrades an older install (AfterTool alone) to both entries, and uninstall still restores the user's bytes", async () => {
    const original = '{\n  "hooks": {\n    "AfterTool": [{"matcher": "web_fetch", "hooks": []}]\n  }\n}\n';
    const older = original.replace('"AfterTool": [', `"AfterTool": [\n      ${BEGIN_MARK} ${geminiHookEntry(COMMAND)}, /* spillway: end */`);
    fs.writeFileSync(file, older);
    const result = await installGeminiHook(file, COMMAND);
    expect(result.changes[0]).toMatch(/replaced/);
    const settings = loaded(fs.readFileSync(file, 'utf8'));
    expect(settings.hooks.AfterTool).toHaveLength(2);
    expect(settings.hooks.AfterAgent).toEqual([JSON.parse(geminiAfterAgentEntry(COMMAND))]);
    expect((await installGeminiHook(file, COMMAND)).changed).toBe(false);
    await uninstallGeminiHook(file);
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
  });

  it('refuses an AfterAgent that is not an array and changes nothing', async () => {
    const text = '{ "hooks": { "AfterAgent": {} } }';
    fs.writeFileSync(file, text);
    await expect(installGeminiHook(file, COMMAND)).rejects.toThrow(/"hooks.AfterAgent" is not an array/);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it('keeps edits the user made elsewhere in the file after installing', async () => {
    fs.writeFileSync(file, '{\n  "a": 1\n}\n');
    await installGeminiHook(file, COMMAND);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"a": 1', '"a": 2, // changed\n  "b": [1, 2]'));
    await uninstallGeminiHook(file);
    expect(fs.readFileSync(file, 'utf8')).toBe('{\n  "a": 2, // changed\n  "b": [1, 2]\n}\n');
  });

  it.each([
    ['invalid JSON', '{ "hooks": { ', /not valid JSON/],
    ['hooks that is not an object', '{ "hooks": [] }', /"hooks" is not an object/],
    ['AfterTool that is not an array', '{ "hooks": { "AfterTool": {} } }', /"hooks.AfterTool" is not an array/],
    ['a top-level array', '[1]', /does not hold a JSON object/],
  ])('refuses %s and changes nothing', async (_name, text, error) => {
    fs.writeFileSync(file, text);
    await expect(installGeminiHook(file, COMMAND)).rejects.toThrow(error);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it('writes through a symlinked settings.json, which stays a symlink', async () => {
    const real = path.join(dir, 'dotfiles-settings.json');
    fs.writeFileSync(real, '{ "x": true }\n');
    fs.rmSync(file, { force: true });
    fs.symlinkSync(real, file);
    await installGeminiHook(file, COMMAND);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true);
    expect(loaded(fs.readFileSync(real, 'utf8')).hooks.AfterTool).toHaveLength(1);
    await uninstallGeminiHook(file);
    expect(fs.readFileSync(real, 'utf8')).toBe('{ "x": true }\n');
  });

  it('uninstall of a file without the hook changes nothing', async () => {
    fs.writeFileSync(file, '{ "hooks": { "AfterTool": [] } }');
    expect((await uninstallGeminiHook(file)).changed).toBe(false);
    expect((await uninstallGeminiHook(path.join(dir, 'missing.json'))).changed).toBe(false);
  });

  it('keeps a command holding quotes, colons and braces exactly', async () => {
    const command = `node -e 'process.stdin.pipe(require("fs").createWriteStream("/tmp/x"))' # {"a": 1, "b":[2]}`;
    fs.writeFileSync(file, '{}');
    await installGeminiHook(file, command);
    expect(loaded(fs.readFileSync(file, 'utf8')).hooks.AfterTool[0].hooks[0].command).toBe(command);
    expect((await installGeminiHook(file, command)).changed).toBe(false);
  });

  it('finds the user settings under $GEMINI_CLI_HOME, else $HOME, and project settings under DIR', () => {
    expect(geminiSettingsPath({ kind: 'user' }, { HOME: '/h' })).toBe('/h/.gemini/settings.json');
    expect(geminiSettingsPath({ kind: 'user' }, { HOME: '/h', GEMINI_CLI_HOME: '/g' })).toBe('/g/.gemini/settings.json');
    expect(geminiSettingsPath({ kind: 'project', dir: '/p' })).toBe('/p/.gemini/settings.json');
  });
});
