// `spillway hook install|uninstall opencode` as a user runs it, on config files
// written the way people write them (comments, trailing commas, tabs, CRLF,
// other plugins, a symlinked dotfile): the plugin lands in "plugin", the rest of
// the file keeps every byte, and uninstall gives back the very file.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { scanTopLevel } from '../../../src/adapters/jsonc-edit';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');
const pluginUrl = pathToFileURL(path.join(repoRoot, 'dist', 'opencode-plugin.js')).href;
const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-oc-install-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [cli, 'hook', ...args], { encoding: 'utf8', env: { ...process.env, HOME: path.join(tmp, 'home'), XDG_CONFIG_HOME: '', ...env } });

/** The strings of the "plugin" array of a JSONC text (the configs here hold no quote in a comment there). */
function plugins(text: string): unknown {
  const start = scanTopLevel(text).keys.get('plugin')!.valueStart;
  const array = text.slice(start, text.indexOf(']', start) + 1);
  return (array.match(/"(?:[^"\\]|\\.)*"/g) ?? []).map((s) => JSON.parse(s) as string);
}

const CONFIGS: Record<string, string> = {
  'comments, a trailing comma and no plugin key': '{\n  // my model\n  "model": "anthropic/claude",\n  /* rules */\n  "permission": { "bash": { "rm *": "deny", }, },\n}\n',
  'other plugins, tabs': '{\n\t"$schema": "https://opencode.ai/config.json",\n\t"plugin": [\n\t\t"opencode-wakatime", // time\n\t\t"file:///home/me/my-plugin.ts"\n\t]\n}',
  'an empty plugin list, CRLF': '{\r\n  "plugin": [],\r\n  "theme": "tokyonight"\r\n}\r\n',
  'an empty object': '{}',
  'only an empty plugin list, on one line': '{"plugin": []}',
};

describe('spillway hook install/uninstall opencode', () => {
  for (const [name, original] of Object.entries(CONFIGS)) {
    it(`adds the plugin to a config with ${name}, then restores it byte for byte`, () => {
      const project = fs.mkdtempSync(path.join(tmp, 'project-'));
      const file = path.join(project, 'opencode.json');
      fs.writeFileSync(file, original, { mode: 0o640 });
      const installed = run(['install', 'opencode', '--project', project]);
      expect(installed.status, installed.stderr).toBe(0);
      expect(installed.stdout).toContain(`added the plugin ${pluginUrl}`);
      const text = fs.readFileSync(file, 'utf8');
      const list = plugins(text) as string[];
      expect(list[0]).toBe(pluginUrl);
      // Only the entry was added: taking its bytes out gives the original back.
      expect(text.length - original.length).toBeLessThan(pluginUrl.length + 30);
      expect(fs.statSync(file).mode & 0o777).toBe(0o640);
      expect(run(['install', 'opencode', '--project', project]).stdout).toMatch(/already installed/);
      const removed = run(['uninstall', 'opencode', '--project', project]);
      expect(removed.status, removed.stderr).toBe(0);
      expect(removed.stdout).toContain('removed the Spillway plugin');
      expect(fs.readFileSync(file, 'utf8')).toBe(original);
      expect(run(['uninstall', 'opencode', '--project', project]).stdout).toMatch(/no Spillway plugin/);
    });
  }

  it('writes the user config in $XDG_CONFIG_HOME/opencode, prefers opencode.jsonc, and removes a file it created', () => {
    const xdg = path.join(tmp, 'xdg');
    const created = run(['install', 'opencode', '--user'], { XDG_CONFIG_HOME: xdg });
    expect(created.status, created.stderr).toBe(0);
    const file = path.join(xdg, 'opencode', 'opencode.json');
    expect(plugins(fs.readFileSync(file, 'utf8'))).toEqual([pluginUrl]);
    expect(run(['uninstall', 'opencode', '--user'], { XDG_CONFIG_HOME: xdg }).status).toBe(0);
    expect(fs.existsSync(file)).toBe(false);

    const jsonc = path.join(xdg, 'opencode', 'opencode.jsonc');
    fs.writeFileSync(jsonc, '// mine\n{ "share": "disabled" }\n');
    expect(run(['install', 'opencode'], { XDG_CONFIG_HOME: xdg }).status).toBe(0);
    expect(plugins(fs.readFileSync(jsonc, 'utf8'))).toEqual([pluginUrl]);
    expect(fs.existsSync(file)).toBe(false);
    run(['uninstall', 'opencode'], { XDG_CONFIG_HOME: xdg });
    expect(fs.readFileSync(jsonc, 'utf8')).toBe('// mine\n{ "share": "disabled" }\n');
  });

  it('edits the target of a symlinked config and leaves the link', () => {
    const project = fs.mkdtempSync(path.join(tmp, 'linked-'));
    const real = path.join(tmp, 'dotfiles-opencode.json');
    fs.writeFileSync(real, '{\n  "model": "a/b"\n}\n');
    fs.symlinkSync(real, path.join(project, 'opencode.json'));
    expect(run(['install', 'opencode', '--project', project]).status).toBe(0);
    expect(fs.lstatSync(path.join(project, 'opencode.json')).isSymbolicLink()).toBe(true);
    expect(plugins(fs.readFileSync(real, 'utf8'))).toEqual([pluginUrl]);
    run(['uninstall', 'opencode', '--project', project]);
    expect(fs.readFileSync(real, 'utf8')).toBe('{\n  "model": "a/b"\n}\n');
  });

  it('refuses a config it cannot read as one object, or whose "plugin" is not a list, and changes nothing', () => {
    for (const bad of ['{ "model": "a/b", ', '[1, 2]', '{ "plugin": "x" }', '{ "a": 1 } trailing']) {
      const project = fs.mkdtempSync(path.join(tmp, 'bad-'));
      const file = path.join(project, 'opencode.json');
      fs.writeFileSync(file, bad);
      const res = run(['install', 'opencode', '--project', project]);
      expect(res.status, bad).not.toBe(0);
      expect(res.stderr).toMatch(/nothing was changed/);
      expect(fs.readFileSync(file, 'utf8')).toBe(bad);
    }
  });
});
