// `spillway hook install|uninstall claude-code` as a user runs it.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-install-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [cli, 'hook', ...args], { encoding: 'utf8', env: { ...process.env, HOME: path.join(tmp, 'home'), ...env } });

describe('spillway hook install/uninstall claude-code', () => {
  it('installs into DIR/.claude/settings.json with --project, the lean hook by absolute path, then reverses it', () => {
    const project = path.join(tmp, 'project');
    fs.mkdirSync(path.join(project, '.claude'), { recursive: true });
    const original = '{\n    "permissions": {"allow": ["Bash(ls)"]},\n\n    "env": { "FOO": "1" }\n}\n';
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), original);
    const first = run(['install', 'claude-code', '--project', project]);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain('added PostToolUse hook');
    expect(first.stdout).toContain('added Stop hook (no matcher)');
    expect(first.stdout).toContain(`set env.CLAUDE_CODE_SHELL_PREFIX: ${path.join(repoRoot, 'dist', 'claude-code-prefix.sh')} -s "$0" ${process.execPath}`);
    expect(first.stdout).toMatch(/backup of the previous file: .*settings\.json\.spillway-backup/);
    const settings = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8'));
    const command: string = settings.hooks.PostToolUse[0].hooks[0].command;
    expect(command).toBe(`${process.execPath} ${path.join(repoRoot, 'dist', 'hook.js')} claude-code`);
    expect(settings.permissions).toEqual({ allow: ['Bash(ls)'] });
    expect(settings.env.FOO).toBe('1');
    expect(Object.keys(settings.hooks)).toEqual(['PostToolUse', 'Stop']);
    expect(settings.hooks.Stop).toEqual([{ hooks: [{ type: 'command', command, timeout: 30 }] }]);
    // The installed command really is a working hook.
    const [node, script, arg] = command.split(' ');
    const hook = spawnSync(node!, [script!, arg!], { input: 'garbage', encoding: 'utf8' });
    expect(hook.status).toBe(0);
    expect(hook.stderr).toMatch(/ignored hook input/);

    expect(run(['install', 'claude-code', '--project', project]).stdout).toMatch(/already installed/);
    const removed = run(['uninstall', 'claude-code', '--project', project]);
    expect(removed.status).toBe(0);
    expect(removed.stdout).toMatch(/removed 2 Spillway hook entries/);
    expect(removed.stdout).toMatch(/removed env\.CLAUDE_CODE_SHELL_PREFIX/);
    // Byte for byte, the user's own layout included.
    expect(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8')).toBe(original);
    // Nothing left behind that still holds the installed version.
    expect(fs.existsSync(path.join(project, '.claude', 'settings.json.spillway-backup'))).toBe(false);
  });

  it('defaults to the user settings under CLAUDE_CONFIG_DIR, and takes --command', () => {
    const config = path.join(tmp, 'config');
    const res = run(['install', 'claude-code', '--command', 'npx spillway hook claude-code'], { CLAUDE_CONFIG_DIR: config });
    expect(res.status, res.stderr).toBe(0);
    const settings = JSON.parse(fs.readFileSync(path.join(config, 'settings.json'), 'utf8'));
    expect(settings.hooks.PostToolUse[0].hooks[0].command).toBe('npx spillway hook claude-code');
  });

  it.each([
    [['install'], /one of claude-code, codex, gemini-cli, opencode/],
    [['install', 'claude-code', '--project'], /--project needs a directory/],
    [['install', 'claude-code', '--bogus'], /unknown option/],
    [['frobnicate'], /unknown subcommand/],
  ])('rejects %j with exit 2 and a message', (args, why) => {
    const res = run(args);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(why);
  });

  it('refuses to touch invalid JSON (exit 1, file unchanged)', () => {
    const project = path.join(tmp, 'broken');
    fs.mkdirSync(path.join(project, '.claude'), { recursive: true });
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), '{"hooks": [');
    const res = run(['install', 'claude-code', '--project', project]);
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(/not valid JSON/);
    expect(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8')).toBe('{"hooks": [');
  });
});
