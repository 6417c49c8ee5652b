import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexHooksPath, codexTrustHash, defaultCodexHookCommand, installCodexHook, isSpillwayCodexCommand, uninstallCodexHook } from '../../../src/adapters/codex-install';

let dir: string;
let hooksPath: string;
let configPath: string;
const COMMAND = "/usr/bin/node '/opt/my tools/spillway/dist/codex-hook.js' codex";

// The user's own file: four-space indent, a hook of their own, keys in their order, no newline at the end.
const USER_HOOKS = `{
    "hooks": {
        "PreToolUse": [
            { "matcher": "apply_patch", "hooks": [ { "type": "command", "command": "/home/me/check.sh" } ] }
        ],
        "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ]
    },
    "note": "mine"
}`;
const USER_CONFIG = `# my settings
model = "gpt-5.1-codex"   # the default

[projects."/home/me/work"]
trust_level = "trusted"`;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-codex-install-'));
  hooksPath = path.join(dir, 'hooks.json');
  configPath = path.join(dir, 'config.toml');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('codexTrustHash', () => {
  it('is the hash Codex 0.169.0 accepted for a hook (recorded from a run in which that hook ran)', () => {
    expect(codexTrustHash('pre_tool_use', 'Bash', '/tmp/cx/dump.sh', 30)).toBe('sha256:ca895c0b44eec111c862bed05bf4243fd77f3f97154c1f3cb8dc068e79f13b6f');
    expect(codexTrustHash('post_tool_use', 'Bash', '/tmp/cx/dump.sh', 30)).toBe('sha256:48be040b0b3e95f6e8f8039abb20bfb44fc6524ce52bdfaa5a45431f33755e03');
    // A group without a matcher (Stop): no matcher key in what is hashed.
    expect(codexTrustHash('stop', undefined, '/tmp/cx/dump.sh', 30)).toBe('sha256:5e045ae12d4c8eb8bc6f2efdc38cd00173ceed7635fa49226b698083bb010e34');
  });
});

describe('install and uninstall codex', () => {
  it('paths: $CODEX_HOME/hooks.json, ~/.codex/hooks.json, DIR/.codex/hooks.json', () => {
    expect(codexHooksPath({ kind: 'user' }, { CODEX_HOME: '/c' })).toBe('/c/hooks.json');
    expect(codexHooksPath({ kind: 'user' }, { HOME: '/h' })).toBe('/h/.codex/hooks.json');
    expect(codexHooksPath({ kind: 'project', dir: '/p' }, {})).toBe('/p/.codex/hooks.json');
  });

  it('the default command is recognised as Spillway\'s, others are not', () => {
    expect(isSpillwayCodexCommand(defaultCodexHookCommand('/opt/x/dist/codex-hook.js', '/usr/bin/node'))).toBe(true);
    expect(isSpillwayCodexCommand(defaultCodexHookCommand('/opt/x/dist/cli.js', '/usr/bin/node'))).toBe(true);
    expect(isSpillwayCodexCommand('/home/me/check.sh')).toBe(false);
  });

  it('adds one PreToolUse entry beside the user\'s, says how to trust it, and gives both files back byte for byte', async () => {
    fs.writeFileSync(hooksPath, USER_HOOKS);
    fs.writeFileSync(configPath, USER_CONFIG);
    const installed = await installCodexHook(hooksPath, COMMAND, { trust: false, configPath });
    const value = JSON.parse(fs.readFileSync(hooksPath, 'utf8'));
    expect(value.note).toBe('mine');
    // The user's Stop group stays first; Spillway's, without a matcher, comes after it.
    expect(value.hooks.Stop).toEqual([...JSON.parse(USER_HOOKS).hooks.Stop, { hooks: [{ type: 'command', command: COMMAND, timeout: 30 }] }]);
    expect(value.hooks.PreToolUse).toHaveLength(2);
    expect(value.hooks.PreToolUse[1]).toEqual({ matcher: 'Bash', hooks: [{ type: 'command', command: COMMAND, timeout: 30 }] });
    expect(fs.readFileSync(hooksPath, 'utf8')).toMatch(/^ {4}"hooks"/m);
    expect(fs.readFileSync(configPath, 'utf8')).toBe(USER_CONFIG);
    const text = installed.changes.join('\n');
    expect(text).toContain(`added PreToolUse hook (matcher "Bash"): ${COMMAND}`);
    expect(text).toContain(`added PostToolUse hook (matcher "Bash"): ${COMMAND}`);
    expect(text).toContain(`added Stop hook (no matcher): ${COMMAND}`);
    expect(text).toContain('trust the Spillway PreToolUse, PostToolUse and Stop hooks');
    expect(text).toContain(`[hooks.state."${hooksPath}:stop:1:0"] trusted_hash = "${codexTrustHash('stop', undefined, COMMAND, 30)}"`);
    expect(value.hooks.PostToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: COMMAND, timeout: 30 }] }]);
    expect(text).toContain(`[hooks.state."${hooksPath}:post_tool_use:0:0"] trusted_hash = "${codexTrustHash('post_tool_use', 'Bash', COMMAND, 30)}"`);
    expect(text).toContain('/hooks');
    expect(text).toContain(`[hooks.state."${hooksPath}:pre_tool_use:1:0"] trusted_hash = "${codexTrustHash('pre_tool_use', 'Bash', COMMAND, 30)}"`);
    expect((await installCodexHook(hooksPath, COMMAND, { trust: false, configPath })).changes[0]).toContain('already installed');

    await installCodexHook(hooksPath, COMMAND, { trust: true, configPath });
    const config = fs.readFileSync(configPath, 'utf8');
    expect(config.startsWith(`${USER_CONFIG}\n`)).toBe(true);
    expect(config).toContain(`[hooks.state."${hooksPath}:pre_tool_use:1:0"]\ntrusted_hash = "${codexTrustHash('pre_tool_use', 'Bash', COMMAND, 30)}"\n`);
    expect(config).toContain(`[hooks.state."${hooksPath}:post_tool_use:0:0"]\ntrusted_hash = "${codexTrustHash('post_tool_use', 'Bash', COMMAND, 30)}"\n`);
    expect(config).toContain(`[hooks.state."${hooksPath}:stop:1:0"]\ntrusted_hash = "${codexTrustHash('stop', undefined, COMMAND, 30)}"\n`);

    const removed = await uninstallCodexHook(hooksPath, configPath);
    expect(removed.changes.join('\n')).toContain('restored');
    expect(fs.readFileSync(hooksPath, 'utf8')).toBe(USER_HOOKS);
    expect(fs.readFileSync(configPath, 'utf8')).toBe(USER_CONFIG);
    expect(fs.existsSync(`${hooksPath}.spillway-backup`)).toBe(false);
  });

  it('a config.toml ending in a newline gets it back as it was too', async () => {
    fs.writeFileSync(configPath, `${USER_CONFIG}\n\n`);
    await installCodexHook(hooksPath, COMMAND, { trust: true, configPath });
    await uninstallCodexHook(hooksPath, configPath);
    expect(fs.readFileSync(configPath, 'utf8')).toBe(`${USER_CONFIG}\n\n`);
  });

  it('files Spillway created are removed again', async () => {
    await installCodexHook(hooksPath, COMMAND, { trust: true, configPath });
    expect(JSON.parse(fs.readFileSync(hooksPath, 'utf8')).hooks.PreToolUse[0].hooks[0].command).toBe(COMMAND);
    await uninstallCodexHook(hooksPath, configPath);
    expect(fs.existsSync(hooksPath)).toBe(false);
    expect(fs.existsSync(configPath)).toBe(false);
  });

  it('a file the user changed after the install loses only Spillway\'s entry', async () => {
    fs.writeFileSync(hooksPath, USER_HOOKS);
    await installCodexHook(hooksPath, COMMAND, { trust: false, configPath });
    const value = JSON.parse(fs.readFileSync(hooksPath, 'utf8'));
    value.added = true;
    fs.writeFileSync(hooksPath, JSON.stringify(value, null, 2));
    await uninstallCodexHook(hooksPath, configPath);
    const after = JSON.parse(fs.readFileSync(hooksPath, 'utf8'));
    expect(after).toEqual({ ...JSON.parse(USER_HOOKS), added: true });
  });

  it('an earlier install with only the PreToolUse hook gains the PostToolUse one, and uninstall still gives the user\'s file back', async () => {
    fs.writeFileSync(hooksPath, USER_HOOKS);
    fs.writeFileSync(configPath, USER_CONFIG);
    await installCodexHook(hooksPath, COMMAND, { trust: true, configPath });
    // What an earlier Spillway left: its PreToolUse group only.
    const value = JSON.parse(fs.readFileSync(hooksPath, 'utf8'));
    delete value.hooks.PostToolUse;
    fs.writeFileSync(hooksPath, JSON.stringify(value, null, 4) + '\n');
    const again = await installCodexHook(hooksPath, COMMAND, { trust: true, configPath });
    expect(again.changes.join('\n')).toContain('added PostToolUse hook');
    const after = JSON.parse(fs.readFileSync(hooksPath, 'utf8'));
    expect(after.hooks.PreToolUse).toHaveLength(2);
    expect(after.hooks.PostToolUse).toHaveLength(1);
    await uninstallCodexHook(hooksPath, configPath);
    expect(fs.readFileSync(hooksPath, 'utf8')).toBe(USER_HOOKS);
    expect(fs.readFileSync(configPath, 'utf8')).toBe(USER_CONFIG);
  });

  it('an earlier install without the Stop hook gains it after the user\'s own, is then complete, and uninstall gives the user\'s file back', async () => {
    fs.writeFileSync(hooksPath, USER_HOOKS);
    fs.writeFileSync(configPath, USER_CONFIG);
    await installCodexHook(hooksPath, COMMAND, { trust: true, configPath });
    // What the previous Spillway left: PreToolUse and PostToolUse only.
    const value = JSON.parse(fs.readFileSync(hooksPath, 'utf8'));
    value.hooks.Stop = value.hooks.Stop.slice(0, 1);
    fs.writeFileSync(hooksPath, JSON.stringify(value, null, 4) + '\n');
    const again = await installCodexHook(hooksPath, COMMAND, { trust: true, configPath });
    expect(again.changes.join('\n')).toContain(`added Stop hook (no matcher): ${COMMAND}`);
    expect(JSON.parse(fs.readFileSync(hooksPath, 'utf8')).hooks.Stop).toHaveLength(2);
    expect(fs.readFileSync(configPath, 'utf8')).toContain(`[hooks.state."${hooksPath}:stop:1:0"]`);
    expect((await installCodexHook(hooksPath, COMMAND, { trust: true, configPath })).changes[0]).toContain('already installed');
    await uninstallCodexHook(hooksPath, configPath);
    expect(fs.readFileSync(hooksPath, 'utf8')).toBe(USER_HOOKS);
    expect(fs.readFileSync(configPath, 'utf8')).toBe(USER_CONFIG);
  });

  it('refuses invalid JSON and changes nothing', async () => {
    fs.writeFileSync(hooksPath, '{ "hooks": ');
    await expect(installCodexHook(hooksPath, COMMAND, { trust: true, configPath })).rejects.toThrow(/not valid JSON/);
    expect(fs.readFileSync(hooksPath, 'utf8')).toBe('{ "hooks": ');
    expect(fs.existsSync(configPath)).toBe(false);
  });

  it('does not write trust over a record the user has for the same hook', async () => {
    fs.writeFileSync(configPath, `[hooks.state."${hooksPath}:pre_tool_use:0:0"]\ntrusted_hash = "sha256:0"\n`);
    const result = await installCodexHook(hooksPath, COMMAND, { trust: true, configPath });
    expect(result.changes.join('\n')).toContain('not recording trust');
    expect(fs.readFileSync(configPath, 'utf8')).toBe(`[hooks.state."${hooksPath}:pre_tool_use:0:0"]\ntrusted_hash = "sha256:0"\n`);
  });
});
