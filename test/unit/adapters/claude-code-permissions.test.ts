// Whether a Claude Code session allows Bash whole, read from its settings files and its command line.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allowedToolsArgs, bashAllowedWhole } from '../../../src/adapters/claude-code-permissions';

let tmp: string;
let env: NodeJS.ProcessEnv;
const children: ChildProcess[] = [];

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-perms-'));
  env = { HOME: tmp, CLAUDE_CONFIG_DIR: path.join(tmp, 'config'), CLAUDE_PROJECT_DIR: path.join(tmp, 'project') };
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function settings(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
}

/**
 * A live process whose command line carries these arguments, standing in for Claude Code (CLAUDE_PID): Node running
 * a script file, which takes any arguments (`node -e` rejected `--settings` as its own option and exited, so the
 * test passed only while /proc was read before that), once its exec is through ('spawn' may come while /proc still
 * shows the forked test runner, or nothing).
 */
async function claudeWith(args: string[]): Promise<string> {
  const script = path.join(tmp, 'claude.js');
  fs.writeFileSync(script, 'setTimeout(() => {}, 60000);\n');
  const argv = [process.execPath, script, ...args];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' });
  children.push(child);
  let exited = false;
  child.once('exit', () => (exited = true));
  while (fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8') !== `${argv.join('\0')}\0`) {
    if (exited) throw new Error('the stand-in for Claude Code exited');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return String(child.pid);
}

describe('allowedToolsArgs', () => {
  it('reads every form of the option, each rule whole', () => {
    expect(allowedToolsArgs(['-p', 'go', '--allowedTools', 'Bash', 'Read', '--verbose'])).toEqual(['Bash', 'Read']);
    expect(allowedToolsArgs(['--allowedTools', 'Bash(npm run test:*),Edit'])).toEqual(['Bash(npm run test:*)', 'Edit']);
    expect(allowedToolsArgs(['--allowed-tools=Bash(git log:*) Read'])).toEqual(['Bash(git log:*)', 'Read']);
    expect(allowedToolsArgs(['--allowedTools', 'Read', '--allowedTools', 'Bash'])).toEqual(['Read', 'Bash']);
    expect(allowedToolsArgs(['--disallowedTools', 'Bash'])).toEqual([]);
  });
});

describe('bashAllowedWhole', () => {
  it('is false with no rules, and with rules narrower than the whole tool', async () => {
    expect(await bashAllowedWhole(tmp, env)).toBe(false);
    settings(path.join(tmp, 'config', 'settings.json'), { permissions: { allow: ['Bash(npm test:*)', 'Read', 'Bash:*'] } });
    expect(await bashAllowedWhole(tmp, env)).toBe(false);
  });

  it.each([
    ['the user settings', 'config/settings.json'],
    ['the project settings', 'project/.claude/settings.json'],
    ['the local project settings', 'project/.claude/settings.local.json'],
  ])('is true when %s allow Bash', async (_, file) => {
    settings(path.join(tmp, file), { permissions: { allow: ['Read', 'Bash'] } });
    expect(await bashAllowedWhole(tmp, env)).toBe(true);
  });

  it('reads the project from the hook event when Claude Code names none', async () => {
    settings(path.join(tmp, 'elsewhere', '.claude', 'settings.json'), { permissions: { allow: ['Bash(*)'] } });
    expect(await bashAllowedWhole(path.join(tmp, 'elsewhere'), { ...env, CLAUDE_PROJECT_DIR: undefined })).toBe(true);
  });

  it.skipIf(process.platform === 'win32')('counts nothing from a FIFO put in a settings file\'s place, and does not wait on it', async () => {
    const file = path.join(tmp, 'project', '.claude', 'settings.local.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    execFileSync('mkfifo', [file]);
    settings(path.join(tmp, 'config', 'settings.json'), { permissions: { allow: ['Bash'] } });
    expect(await bashAllowedWhole(tmp, env)).toBe(true);
  });

  it('counts nothing from a file that does not parse or holds something else', async () => {
    settings(path.join(tmp, 'config', 'settings.json'), '{"permissions": {"allow": ["Bash"]');
    settings(path.join(tmp, 'project', '.claude', 'settings.json'), { permissions: { allow: 'Bash' } });
    expect(await bashAllowedWhole(tmp, env)).toBe(false);
  });

  it.skipIf(process.platform !== 'linux')('reads --allowedTools and --settings from Claude Code\'s command line (CLAUDE_PID)', async () => {
    expect(await bashAllowedWhole(tmp, { ...env, CLAUDE_PID: await claudeWith(['-p', 'go', '--allowedTools', 'Read,Bash']) })).toBe(true);
    expect(await bashAllowedWhole(tmp, { ...env, CLAUDE_PID: await claudeWith(['--allowedTools', 'Bash(ls:*)']) })).toBe(false);
    expect(await bashAllowedWhole(tmp, { ...env, CLAUDE_PID: await claudeWith(['--settings', '{"permissions":{"allow":["Bash"]}}']) })).toBe(true);
    settings(path.join(tmp, 'extra.json'), { permissions: { allow: ['Bash'] } });
    expect(await bashAllowedWhole(tmp, { ...env, CLAUDE_PID: await claudeWith(['--settings', path.join(tmp, 'extra.json')]) })).toBe(true);
    expect(await bashAllowedWhole(tmp, { ...env, CLAUDE_PID: 'not-a-pid' })).toBe(false);
  });
});
