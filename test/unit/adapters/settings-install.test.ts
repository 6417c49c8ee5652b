import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CLAUDE_CODE_HOOK_EVENTS,
  CLAUDE_CODE_HOOK_MATCHER,
  claudeSettingsPath,
  defaultHookCommand,
  installClaudeCodeHook,
  isSpillwayHookCommand,
  shellQuote,
  uninstallClaudeCodeHook,
} from '../../../src/adapters/settings-install';
import { isSpillwayPrefix, shellPrefixValue } from '../../../src/adapters/claude-code-prefix-install';

let dir: string;
let settingsPath: string;
const COMMAND = "/usr/bin/node '/opt/my tools/spillway/dist/cli.js' hook claude-code";
const PREFIX = shellPrefixValue('/opt/my tools/spillway/dist/claude-code-prefix.sh', '/usr/bin/node');
const read = () => JSON.parse(fs.readFileSync(settingsPath, 'utf8'));

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-settings-'));
  settingsPath = path.join(dir, '.claude', 'settings.json');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('claudeSettingsPath', () => {
  it('uses CLAUDE_CONFIG_DIR for --user, else ~/.claude', () => {
    expect(claudeSettingsPath({ kind: 'user' }, { CLAUDE_CONFIG_DIR: '/cfg' })).toBe('/cfg/settings.json');
    expect(claudeSettingsPath({ kind: 'user' }, { HOME: '/home/u' })).toBe('/home/u/.claude/settings.json');
  });
  it('uses DIR/.claude/settings.json for --project', () => {
    expect(claudeSettingsPath({ kind: 'project', dir: '/repo' }, {})).toBe('/repo/.claude/settings.json');
  });
});

describe('defaultHookCommand', () => {
  it('runs this node on this CLI by absolute path, shell-quoted', () => {
    expect(defaultHookCommand('/opt/my tools/cli.js', '/usr/bin/node')).toBe("/usr/bin/node '/opt/my tools/cli.js' hook claude-code");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(defaultHookCommand('/pkg/dist/hook.js', '/usr/bin/node')).toBe('/usr/bin/node /pkg/dist/hook.js claude-code');
    expect(isSpillwayHookCommand(defaultHookCommand('/x/cli.js'))).toBe(true);
    expect(isSpillwayHookCommand(defaultHookCommand('/x y/dist/hook.js'))).toBe(true);
    expect(isSpillwayHookCommand('npx spillway hook claude-code')).toBe(true);
    expect(isSpillwayHookCommand('node notahook.js claude-code')).toBe(false);
    expect(isSpillwayHookCommand('node other-hook.js')).toBe(false);
  });
});

describe('installClaudeCodeHook', () => {
  it('creates settings.json when there is none, without a backup', async () => {
    const r = await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    expect(r.changed).toBe(true);
    expect(r.backupPath).toBeUndefined();
    const hooks = [{ type: 'command', command: COMMAND, timeout: 30 }];
    // Stop takes no matcher: its group has none.
    expect(read()).toEqual({ hooks: { PostToolUse: [{ matcher: CLAUDE_CODE_HOOK_MATCHER, hooks }], Stop: [{ hooks }] }, env: { CLAUDE_CODE_SHELL_PREFIX: PREFIX } });
    expect(CLAUDE_CODE_HOOK_EVENTS.map((e) => e.event)).toEqual(['PostToolUse', 'Stop']);
    expect(r.changes).toContain(`added Stop hook (no matcher): ${COMMAND}`);
    // Claude Code splits a prefix at its last " -": the script's path before, shell text ("$0": its shell) after.
    expect(PREFIX).toBe('/opt/my tools/spillway/dist/claude-code-prefix.sh -s "$0" /usr/bin/node');
    expect(isSpillwayPrefix(PREFIX)).toBe(true);
    expect(isSpillwayPrefix('/usr/local/bin/audit -v')).toBe(false);
  });

  it('merges with existing settings and hooks, keeps a backup of the previous file', async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    const before = {
      model: 'opus',
      permissions: { allow: ['Bash(npm test)'] },
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'guard.sh' }] }],
        PostToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier.sh' }] }],
      },
    };
    fs.writeFileSync(settingsPath, JSON.stringify(before), { mode: 0o640 });
    const r = await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    expect(r.changed).toBe(true);
    expect(JSON.parse(fs.readFileSync(r.backupPath!, 'utf8'))).toEqual(before);
    const after = read();
    expect(after.model).toBe('opus');
    expect(after.permissions).toEqual(before.permissions);
    expect(after.hooks.PreToolUse).toEqual(before.hooks.PreToolUse);
    expect(after.hooks.PostToolUse).toHaveLength(2);
    expect(after.hooks.PostToolUse[0]).toEqual(before.hooks.PostToolUse[0]);
    expect(fs.statSync(settingsPath).mode & 0o777).toBe(0o640);
  });

  it('is idempotent and replaces an older Spillway command instead of adding a second', async () => {
    await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    const again = await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    expect(again.changed).toBe(false);
    expect(again.changes[0]).toMatch(/already installed/);
    const newPrefix = shellPrefixValue('/new/dist/claude-code-prefix.sh', '/usr/local/bin/node');
    const moved = await installClaudeCodeHook(settingsPath, '/usr/local/bin/node /new/cli.js hook claude-code', newPrefix);
    expect(moved.changed).toBe(true);
    expect(moved.changes[0]).toMatch(/replaced 2 earlier/);
    const hooks = read().hooks.PostToolUse.flatMap((g: { hooks: Array<{ command: string }> }) => g.hooks.map((h) => h.command));
    expect(hooks).toEqual(['/usr/local/bin/node /new/cli.js hook claude-code']);
    expect(read().hooks.Stop).toEqual([{ hooks: [{ type: 'command', command: '/usr/local/bin/node /new/cli.js hook claude-code', timeout: 30 }] }]);
    // The new prefix replaces Spillway's own: it is not chained to itself.
    expect(read().env).toEqual({ CLAUDE_CODE_SHELL_PREFIX: newPrefix });
    // The upgrade made no backup: one would hold the installed version.
    expect(fs.existsSync(`${settingsPath}.spillway-backup`)).toBe(false);
  });

  it('upgrades an install of the Bash hooks (PreToolUse, PostToolUse, PostToolUseFailure) in place, keeping the first backup', async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    const user = { model: 'opus', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'guard.sh' }] }] } };
    fs.writeFileSync(settingsPath, JSON.stringify(user));
    await installClaudeCodeHook(settingsPath, COMMAND);
    // What an earlier version wrote: the same command on three events, Bash among the PostToolUse tools.
    const old = read();
    const ours = (matcher: string) => ({ matcher, hooks: [{ type: 'command', command: COMMAND, timeout: 30 }] });
    old.hooks = { PreToolUse: [...user.hooks.PreToolUse, ours('Bash')], PostToolUse: [ours(`Bash|${CLAUDE_CODE_HOOK_MATCHER}`)], PostToolUseFailure: [ours('Bash')] };
    fs.writeFileSync(settingsPath, JSON.stringify(old));
    const r = await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    expect(r.changed).toBe(true);
    expect(r.backupPath).toBeUndefined();
    expect(r.changes[0]).toMatch(/replaced 3 earlier/);
    const { matcher: _none, ...stop } = ours('');
    expect(read().hooks).toEqual({ PreToolUse: user.hooks.PreToolUse, PostToolUse: [ours(CLAUDE_CODE_HOOK_MATCHER)], Stop: [stop] });
    expect(read().env).toEqual({ CLAUDE_CODE_SHELL_PREFIX: PREFIX });
    expect(JSON.parse(fs.readFileSync(`${settingsPath}.spillway-backup`, 'utf8'))).toEqual(user);
  });

  it("upgrades an install without the Stop hook in place, beside the user's own Stop hook, and uninstall still gives the file back byte for byte", async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    const original = '{\n    "hooks": {\n        "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]\n    }\n}';
    fs.writeFileSync(settingsPath, original);
    await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    // What the previous version wrote: PostToolUse alone.
    const old = read();
    old.hooks.Stop = old.hooks.Stop.slice(0, 1);
    fs.writeFileSync(settingsPath, JSON.stringify(old, null, 4) + '\n');
    const r = await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    expect(r.changes[0]).toMatch(/replaced 1 earlier/);
    expect(r.changes).toContain(`added Stop hook (no matcher): ${COMMAND}`);
    expect(read().hooks.Stop).toEqual([JSON.parse(original).hooks.Stop[0], { hooks: [{ type: 'command', command: COMMAND, timeout: 30 }] }]);
    expect((await installClaudeCodeHook(settingsPath, COMMAND, PREFIX)).changes[0]).toMatch(/already installed/);
    await uninstallClaudeCodeHook(settingsPath);
    expect(fs.readFileSync(settingsPath, 'utf8')).toBe(original);
  });

  it("chains the user's own shell prefix and gives it back on uninstall, the file byte for byte", async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    const original = '{\n  "env": {"CLAUDE_CODE_SHELL_PREFIX": "/usr/local/bin/audit -v", "TZ": "UTC"},\n  "model": "opus"\n}\n';
    fs.writeFileSync(settingsPath, original);
    const r = await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    expect(r.changes.join('\n')).toMatch(/kept your shell prefix in env\.SPILLWAY_CHAINED_SHELL_PREFIX/);
    expect(read().env).toEqual({ CLAUDE_CODE_SHELL_PREFIX: PREFIX, SPILLWAY_CHAINED_SHELL_PREFIX: '/usr/local/bin/audit -v', TZ: 'UTC' });
    const u = await uninstallClaudeCodeHook(settingsPath);
    expect(u.changes.join('\n')).toMatch(/restored your env\.CLAUDE_CODE_SHELL_PREFIX: \/usr\/local\/bin\/audit -v/);
    expect(fs.readFileSync(settingsPath, 'utf8')).toBe(original);
    expect(fs.existsSync(`${settingsPath}.spillway-backup`)).toBe(false);
  });

  it('on uninstall keeps what the user changed since the install (and still takes out only Spillway)', async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    fs.writeFileSync(settingsPath, '{"model": "opus"}');
    await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    fs.writeFileSync(settingsPath, JSON.stringify({ ...read(), theme: 'dark' }));
    await uninstallClaudeCodeHook(settingsPath);
    expect(read()).toEqual({ model: 'opus', theme: 'dark' });
  });

  it.each([['  '], ['    '], ['\t']])('keeps the file indentation (%j)', async (indent) => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    const original = JSON.stringify({ model: 'opus', env: { A: '1' } }, null, indent) + '\n';
    fs.writeFileSync(settingsPath, original);
    await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    expect(fs.readFileSync(settingsPath, 'utf8')).toBe(JSON.stringify(read(), null, indent) + '\n');
    await uninstallClaudeCodeHook(settingsPath);
    expect(fs.readFileSync(settingsPath, 'utf8')).toBe(original);
    expect(fs.existsSync(`${settingsPath}.spillway-backup`)).toBe(false);
  });

  it('refuses invalid JSON and changes nothing', async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    fs.writeFileSync(settingsPath, '{ "hooks": ');
    await expect(installClaudeCodeHook(settingsPath, COMMAND)).rejects.toThrow(/not valid JSON.*nothing was changed/);
    expect(fs.readFileSync(settingsPath, 'utf8')).toBe('{ "hooks": ');
    expect(fs.existsSync(`${settingsPath}.spillway-backup`)).toBe(false);
  });

  it('refuses a FIFO in place of settings.json at once, instead of waiting for a writer', async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    execFileSync('mkfifo', [settingsPath]);
    await expect(installClaudeCodeHook(settingsPath, COMMAND)).rejects.toThrow(/not a regular file \(FIFO\)/);
    await expect(uninstallClaudeCodeHook(settingsPath)).rejects.toThrow(/not a regular file \(FIFO\)/);
  });

  it('refuses a hooks.PostToolUse that is not a list', async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    fs.writeFileSync(settingsPath, JSON.stringify({ hooks: { PostToolUse: 'x' } }));
    await expect(installClaudeCodeHook(settingsPath, COMMAND)).rejects.toThrow(/not an array/);
  });

  it('writes through a symlinked settings.json and keeps the link', async () => {
    const real = path.join(dir, 'dotfiles', 'claude-settings.json');
    fs.mkdirSync(path.dirname(real), { recursive: true });
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    fs.writeFileSync(real, JSON.stringify({ theme: 'dark' }));
    fs.symlinkSync(real, settingsPath);
    await installClaudeCodeHook(settingsPath, COMMAND);
    expect(fs.lstatSync(settingsPath).isSymbolicLink()).toBe(true);
    expect(JSON.parse(fs.readFileSync(real, 'utf8')).theme).toBe('dark');
    expect(JSON.parse(fs.readFileSync(real, 'utf8')).hooks.PostToolUse).toHaveLength(1);
    expect(JSON.parse(fs.readFileSync(real, 'utf8')).env).toBeUndefined();
  });
});

describe('uninstallClaudeCodeHook', () => {
  it('removes only Spillway entries and the keys it left empty', async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    const other = { matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier.sh' }] };
    fs.writeFileSync(settingsPath, JSON.stringify({ hooks: { PostToolUse: [other] } }));
    await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    const r = await uninstallClaudeCodeHook(settingsPath);
    expect(r.changed).toBe(true);
    expect(read()).toEqual({ hooks: { PostToolUse: [other] } });
  });

  it('restores a file that had no hooks to exactly that', async () => {
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    fs.writeFileSync(settingsPath, JSON.stringify({ model: 'sonnet' }));
    await installClaudeCodeHook(settingsPath, COMMAND, PREFIX);
    await uninstallClaudeCodeHook(settingsPath);
    expect(read()).toEqual({ model: 'sonnet' });
  });

  it('says so when there is nothing to remove', async () => {
    expect((await uninstallClaudeCodeHook(settingsPath)).changed).toBe(false);
    fs.mkdirSync(path.dirname(settingsPath), { recursive: true });
    fs.writeFileSync(settingsPath, '{}');
    const r = await uninstallClaudeCodeHook(settingsPath);
    expect(r.changed).toBe(false);
    expect(r.changes[0]).toMatch(/no Spillway hook/);
  });
});
