// The Bash capture's hook side, in process: when PreToolUse rewrites a
// command, and what the Post hooks do with a wrapped one.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { captureFileOf, wrappedCommandOf, wrapperTool } from '../../../src/adapters/bash-capture';
import type { PostToolUseEvent, PostToolUseFailureEvent, PreToolUseEvent } from '../../../src/adapters/claude-code-event';
import { hookOutputFor } from '../../../src/adapters/claude-code-hook';
import { readManifest } from '../../../src/spill/manifest';

let tmp: string;
let transcript: string;
const SESSION = 'sess-1';
const FINISH = '/bin/false';

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-cc-bash-'));
  transcript = path.join(tmp, 'projects', 'enc', `${SESSION}.jsonl`);
  fs.mkdirSync(path.dirname(transcript), { recursive: true });
  // Claude Code's permission rules are read from here only (not from the machine's own settings, nor a Claude Code this runs under).
  vi.stubEnv('CLAUDE_CONFIG_DIR', path.join(tmp, 'config'));
  vi.stubEnv('CLAUDE_PROJECT_DIR', '');
  vi.stubEnv('CLAUDE_PID', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function pre(command: string, mode = 'bypassPermissions', id = 'toolu_1'): PreToolUseEvent {
  return { hook_event_name: 'PreToolUse', session_id: SESSION, transcript_path: transcript, cwd: tmp, permission_mode: mode, tool_name: 'Bash', tool_input: { command, description: 'd' }, tool_use_id: id };
}

async function rewrite(command: string, mode?: string): Promise<string | undefined> {
  const out = await hookOutputFor(pre(command, mode), { finishCommand: FINISH });
  return (out as { hookSpecificOutput?: { updatedInput?: { command?: string } } } | undefined)?.hookSpecificOutput?.updatedInput?.command;
}

describe('PreToolUse', () => {
  it('wraps a Bash command in a bypassPermissions session, with a private empty capture file', async () => {
    const wrapped = await rewrite('npm test 2>&1 | tail -5');
    const file = captureFileOf(wrapped)!;
    expect(file).toBe(path.join(tmp, 'projects', 'enc', SESSION, 'spillway', 'bash-toolu_1.txt'));
    expect(wrappedCommandOf(wrapped)).toBe('npm test 2>&1 | tail -5');
    expect(fs.statSync(file).size).toBe(0);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  });

  it('keeps the other input fields (timeout, run_in_background, description)', async () => {
    const event = pre('make');
    event.tool_input = { command: 'make', timeout: 5000, run_in_background: true, description: 'build' };
    const out = (await hookOutputFor(event, { finishCommand: FINISH })) as { hookSpecificOutput: { updatedInput: Record<string, unknown> } };
    expect(out.hookSpecificOutput.updatedInput).toMatchObject({ timeout: 5000, run_in_background: true, description: 'build' });
  });

  it('describes a command given no description from its own first line (Claude Code names a backgrounded command by it, else by the wrapper)', async () => {
    let id = 0;
    const described = async (command: string) => {
      const out = (await hookOutputFor({ ...pre(command, 'bypassPermissions', `toolu_d${id++}`), tool_input: { command } }, { finishCommand: FINISH })) as { hookSpecificOutput: { updatedInput: Record<string, unknown> } };
      return out.hookSpecificOutput.updatedInput.description;
    };
    expect(await described('npm test')).toBe('npm test');
    expect(await described('cd app\nmake -j8 all')).toBe('cd app…');
    const long = await described(`echo ${'\u6587'.repeat(200)}`);
    expect(Buffer.byteLength(long as string)).toBeLessThanOrEqual(100);
    expect(long).toMatch(/^echo \u6587+…$/);
    // A description the model gave is kept.
    const event = pre('make');
    const out = (await hookOutputFor(event, { finishCommand: FINISH })) as { hookSpecificOutput: { updatedInput: Record<string, unknown> } };
    expect(out.hookSpecificOutput.updatedInput.description).toBe('d');
  });

  it.each(['default', 'acceptEdits', 'plan', undefined])('leaves commands alone in a %s session (permission rules read the command)', async (mode) => {
    expect(await rewrite('make', mode ?? 'unset-mode')).toBeUndefined();
  });

  it('wraps in a default or acceptEdits session only when its rules allow Bash whole; never in plan mode', async () => {
    expect(await rewrite('make', 'default')).toBeUndefined();
    const project = path.join(tmp, '.claude', 'settings.local.json');
    fs.mkdirSync(path.dirname(project), { recursive: true });
    fs.writeFileSync(project, JSON.stringify({ permissions: { allow: ['Bash(make:*)'] } }));
    expect(await rewrite('make', 'default')).toBeUndefined();
    fs.writeFileSync(project, JSON.stringify({ permissions: { allow: ['Bash'] } }));
    // (Each call its own id: a capture file already there is never reused.)
    const wraps = async (mode: string, id: string) => captureFileOf((await hookOutputFor(pre('make', mode, id), { finishCommand: FINISH }) as any)?.hookSpecificOutput.updatedInput.command);
    expect(await wraps('default', 'toolu_d')).toBeDefined();
    expect(await wraps('acceptEdits', 'toolu_a')).toBeDefined();
    expect(await wraps('plan', 'toolu_p')).toBeUndefined();
    expect(await hookOutputFor(pre('make', 'default', 'toolu_3'), { finishCommand: FINISH, captureBash: 'bypass' })).toBeUndefined();
  });

  it('wraps in any session with captureBash "always", in none with "never"', async () => {
    expect(captureFileOf((await hookOutputFor(pre('make', 'default'), { finishCommand: FINISH, captureBash: 'always' }) as any)?.hookSpecificOutput.updatedInput.command)).toBeDefined();
    expect(await hookOutputFor(pre('make', 'bypassPermissions', 'toolu_2'), { finishCommand: FINISH, captureBash: 'never' })).toBeUndefined();
  });

  it.each([
    'trap "rm -f x" EXIT; make',
    'exec make',
    'cd src && exec ./build.sh',
    'FOO=1 exec ./run',
    'if true; then exec 2>&1; fi',
    "eval 'trap - EXIT'",
    'builtin exec ls',
    'x=$(exec true)',
    '',
  ])('leaves %j alone', async (command) => {
    expect(await rewrite(command)).toBeUndefined();
  });

  it.each(['bundle exec rspec', 'pnpm exec vitest run', 'npm exec -- jest', 'docker exec web make test', 'kubectl exec pod -- ls', 'pytest -k "not trap"', 'find . -exec grep -l x {} +', 'git rebase --exec "make test" main'])(
    'wraps %j (exec or trap as an argument)',
    async (command) => {
      expect(await rewrite(command)).toBeDefined();
    },
  );

  it('leaves a command alone when its wrapper would pass the 128 KiB a single argument may hold (it would not run at all)', async () => {
    const claudeQuoted = (c: string) => `eval '${c.replaceAll("'", `'"'"'`)}'`;
    const heredoc = (line: string, n: number) => `cat > notes.md <<'EOF'\n${Array.from({ length: n }, () => line).join('\n')}\nEOF\nmake`;
    // Multi-byte text, newlines (two bytes quoted), control characters (four), quotes (five once Claude Code quotes them).
    for (const line of ['\u6587', "it's", '\u0001\t', 'plain ascii text here']) {
      let wrappedOnce = false;
      for (let n = 1000; n <= 80_000; n = Math.ceil(n * 1.15)) {
        const wrapped = await rewrite(heredoc(line, n), 'bypassPermissions');
        if (wrapped === undefined) continue;
        wrappedOnce = true;
        fs.rmSync(captureFileOf(wrapped)!);
        expect(Buffer.byteLength(claudeQuoted(wrapped)), `${JSON.stringify(line)} x ${n}`).toBeLessThan(128 * 1024);
      }
      expect(wrappedOnce).toBe(true);
    }
    expect(await rewrite(heredoc('\u6587', 31_000))).toBeUndefined();
  });

  it('does not reuse a capture file that is already there (same id twice)', async () => {
    expect(await rewrite('make')).toBeDefined();
    expect(await rewrite('make')).toBeUndefined();
  });

  it('never wraps other tools', async () => {
    const event = { ...pre('x'), tool_name: 'Grep', tool_input: { pattern: 'x' } };
    expect(await hookOutputFor(event, { finishCommand: FINISH })).toBeUndefined();
  });
});

describe('the tools the wrapper runs after the command', () => {
  it('are found by absolute path on the PATH when wrapped, else through command -p', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-tools-'));
    fs.writeFileSync(path.join(dir, 'wc'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'cat'), 'not executable\n', { mode: 0o644 });
    expect(wrapperTool('wc', `relative/bin${path.delimiter}${dir}`)).toBe(path.join(dir, 'wc'));
    expect(wrapperTool('cat', dir)).toBe('command -p cat');
    expect(wrapperTool('rm', '')).toBe('command -p rm');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('Post hooks of a wrapped command', () => {
  async function wrappedCall(): Promise<{ command: string; file: string }> {
    const command = (await rewrite('make all'))!;
    return { command, file: captureFileOf(command)! };
  }
  const post = (command: string, extra: Record<string, unknown> = {}): PostToolUseEvent => ({
    hook_event_name: 'PostToolUse', session_id: SESSION, transcript_path: transcript, cwd: tmp, tool_name: 'Bash',
    tool_input: { command, ...extra }, tool_use_id: 'toolu_1', tool_response: { stdout: '', stderr: '', interrupted: true, isImage: false },
  });
  const failure = (command: string, interrupt = false): PostToolUseFailureEvent => ({
    hook_event_name: 'PostToolUseFailure', session_id: SESSION, transcript_path: transcript, cwd: tmp, tool_name: 'Bash',
    tool_input: { command }, tool_use_id: 'toolu_1', error: 'Command timed out', is_interrupt: interrupt,
  });
  const log = Array.from({ length: 3000 }, (_, i) => (i === 1700 ? 'FATAL: out of memory in step 1700' : `step ${i} ok`)).join('\n');

  it('change nothing once the command handed back its output (small: file gone)', async () => {
    const { command, file } = await wrappedCall();
    fs.rmSync(file);
    expect(await hookOutputFor(post(command), {})).toBeUndefined();
    expect(await hookOutputFor(failure(command), {})).toBeUndefined();
  });

  it('change nothing, and remove the file, when nothing was captured (a sandbox kept the shell from writing it)', async () => {
    for (const event of [post, failure]) {
      const { command, file } = await wrappedCall();
      expect(fs.statSync(file).size).toBe(0);
      expect(await hookOutputFor(event(command), {})).toBeUndefined();
      expect(fs.existsSync(file)).toBe(false);
    }
  });

  it('keep the empty file of a command still running in the background (it writes there yet)', async () => {
    const { command, file } = await wrappedCall();
    const event = post(command);
    event.tool_response = { stdout: '', stderr: '', interrupted: false, backgroundTaskId: 'b124' };
    await hookOutputFor(event, {});
    expect(fs.existsSync(file)).toBe(true);
  });

  it('change nothing once the finish step recorded the capture', async () => {
    const { command, file } = await wrappedCall();
    fs.writeFileSync(file, log);
    const first = await hookOutputFor(failure(command, true), {});
    expect(first).toBeDefined();
    expect(await hookOutputFor(post(command), {})).toBeUndefined();
  });

  it('give the model a digest of a killed command (timeout) as additional context, and record it', async () => {
    const { command, file } = await wrappedCall();
    fs.writeFileSync(file, log);
    const out = (await hookOutputFor(failure(command), {})) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(out.hookSpecificOutput.hookEventName).toBe('PostToolUseFailure');
    expect(out.hookSpecificOutput.additionalContext).toContain('FATAL: out of memory in step 1700');
    expect(out.hookSpecificOutput.additionalContext).toContain(file);
    expect(out.hookSpecificOutput.additionalContext.length).toBeLessThan(3_500);
    const { records } = await readManifest(path.dirname(file));
    expect(records).toMatchObject([{ file: path.basename(file), tool: 'Bash', args: { command: 'make all' } }]);
  });

  it('replace the empty stdout of an interrupted command with the digest (PostToolUse)', async () => {
    const { command, file } = await wrappedCall();
    fs.writeFileSync(file, log);
    const out = (await hookOutputFor(post(command), {})) as { hookSpecificOutput: { updatedToolOutput: { stdout: string; interrupted: boolean } } };
    expect(out.hookSpecificOutput.updatedToolOutput.stdout).toContain('FATAL: out of memory');
    expect(out.hookSpecificOutput.updatedToolOutput.interrupted).toBe(true);
  });

  it('show what a command moved to the background by its timeout printed so far, without recording it yet', async () => {
    const { command, file } = await wrappedCall();
    fs.writeFileSync(file, log);
    const event = post(command);
    event.tool_response = { stdout: '', stderr: '', interrupted: false, backgroundTaskId: 'b123' };
    const out = (await hookOutputFor(event, {})) as { hookSpecificOutput: { updatedToolOutput: { stdout: string } } };
    expect(out.hookSpecificOutput.updatedToolOutput.stdout).toContain('still running');
    expect(out.hookSpecificOutput.updatedToolOutput.stdout).toContain('FATAL: out of memory');
    expect((await readManifest(path.dirname(file))).records).toHaveLength(0);
  });

  it('leave a command still running in the background alone', async () => {
    const { command, file } = await wrappedCall();
    fs.writeFileSync(file, log);
    expect(await hookOutputFor(post(command, { run_in_background: true }), {})).toBeUndefined();
  });

  it('ignore a capture file named for another call', async () => {
    const { command, file } = await wrappedCall();
    fs.writeFileSync(file, log);
    expect(await hookOutputFor({ ...failure(command), tool_use_id: 'toolu_other' }, {})).toBeUndefined();
  });
});
