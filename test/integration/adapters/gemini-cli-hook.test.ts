// dist/gemini-cli-hook.js as Gemini CLI runs it (event on stdin, answer on
// stdout), on events shaped as Gemini CLI 0.61.0 sends them.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const hook = path.resolve(__dirname, '../../../dist/gemini-cli-hook.js');
let tmp: string;
let projectTemp: string;

beforeAll(() => {
  if (!fs.existsSync(hook)) throw new Error('run `npm run build` first: dist/gemini-cli-hook.js is missing');
});
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-gemini-hook-'));
  projectTemp = path.join(tmp, '.gemini', 'tmp', 'proj');
  fs.mkdirSync(path.join(projectTemp, 'chats'), { recursive: true });
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

function event(llmContent: unknown, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    session_id: '0a1b2c3d-aaaa-bbbb-cccc-000000000001',
    transcript_path: path.join(projectTemp, 'chats', 'session-2026-01-01T00-00-0a1b2c3d.jsonl'),
    cwd: tmp,
    hook_event_name: 'AfterTool',
    timestamp: '2026-01-01T00:00:00.000Z',
    tool_name: 'run_shell_command',
    tool_input: { command: 'make all', description: 'build' },
    tool_response: { llmContent, returnDisplay: 'x' },
    ...extra,
  });
}

function runHook(stdin: string, env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, [hook], { input: stdin, encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

const shell = (output: string, trailer = 'Exit Code: 2\nProcess Group PGID: 77') => `<untrusted_context>\nOutput: ${output}\n${trailer}\n</untrusted_context>`;

function bigOutput(lines: number, failureAt: number, failure: string): string {
  return Array.from({ length: lines }, (_, i) => (i + 1 === failureAt ? failure : `step ${i + 1} compiled fine`)).join('\n');
}

describe('dist/gemini-cli-hook.js', () => {
  it("at a turn's end (AfterAgent) queues the session file of a session with blobs and a bucket, and answers nothing", () => {
    const queue = path.join(tmp, 'uploads');
    // A bucket nobody answers at: the uploader the hook starts fails and leaves the queue as it is.
    const env = { SPILLWAY_STORE: 's3://bucket/team', SPILLWAY_UPLOAD_QUEUE: queue, AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_REGION: 'us-east-1' };
    const afterAgent = JSON.stringify({ ...JSON.parse(event('')), hook_event_name: 'AfterAgent', prompt: 'build it', prompt_response: 'done', stop_hook_active: false });
    const transcripts = () => (fs.existsSync(queue) ? fs.readdirSync(queue).filter((n) => n.startsWith('transcript-')) : []);
    // No blob of Spillway's in the session yet: nothing to send.
    expect(runHook(afterAgent, env)).toMatchObject({ status: 0, stdout: '' });
    expect(transcripts()).toEqual([]);
    expect(runHook(event(shell(bigOutput(3000, 10, 'error: boom'))), env).status).toBe(0);
    for (const name of transcripts()) fs.rmSync(path.join(queue, name));
    expect(runHook(afterAgent, env)).toMatchObject({ status: 0, stdout: '' });
    const [entry, ...more] = transcripts();
    expect(more).toEqual([]);
    expect(JSON.parse(fs.readFileSync(path.join(queue, entry!), 'utf8'))).toMatchObject({ kind: 'transcript', agent: 'gemini-cli', sessionId: '0a1b2c3d-aaaa-bbbb-cccc-000000000001', file: JSON.parse(afterAgent).transcript_path });
  });

  it('answers a large shell output with a read_file of its digest; the blob holds the output whole', () => {
    const output = bigOutput(3000, 1700, 'src/app.c:17:3: error: expected ‘;’ before ‘}’ token');
    const res = runHook(event(shell(output)));
    expect(res.status).toBe(0);
    const answer = JSON.parse(res.stdout);
    expect(answer.hookSpecificOutput.hookEventName).toBe('AfterTool');
    const request = answer.hookSpecificOutput.tailToolCallRequest;
    expect(request.name).toBe('read_file');
    const digestFile = request.args.file_path as string;
    const sessionDir = path.join(projectTemp, 'tool-outputs', 'session-0a1b2c3d-aaaa-bbbb-cccc-000000000001');
    expect(path.dirname(digestFile)).toBe(sessionDir);
    const digest = fs.readFileSync(digestFile, 'utf8');
    expect(digest.startsWith('<untrusted_context>\nOutput: step 1 compiled fine\n')).toBe(true);
    expect(digest).toContain('[line 1700] src/app.c:17:3: error: expected ‘;’ before ‘}’ token');
    expect(digest).toContain('step 3000 compiled fine\nExit Code: 2\nProcess Group PGID: 77\n');
    const blob = /is in (\S+)\]\n<\/untrusted_context>$/.exec(digest)![1]!;
    expect(fs.readFileSync(blob, 'utf8')).toBe(output);
    expect(fs.statSync(blob).mode & 0o777).toBe(0o600);
    expect(fs.statSync(digestFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(sessionDir).mode & 0o777).toBe(0o700);
    const record = JSON.parse(fs.readFileSync(path.join(sessionDir, 'spillway.jsonl'), 'utf8').trim());
    expect(record).toMatchObject({ file: path.basename(blob), tool: 'run_shell_command', sessionId: '0a1b2c3d-aaaa-bbbb-cccc-000000000001', args: { command: 'make all' } });
  });

  it('leaves a small output, other tools, cancelled and backgrounded commands alone (prints nothing, writes nothing)', () => {
    const cases = [
      event(shell('ok', 'Process Group PGID: 1')),
      event(shell('x'.repeat(4000))),
      event(shell(bigOutput(3000, 5, 'error: x')), { tool_name: 'read_file' }),
      event(`<untrusted_context>\nCommand was automatically cancelled because it exceeded the timeout of 5.0 minutes without output. Below is the output before it was cancelled:\n${bigOutput(3000, 5, 'error: x')}\n</untrusted_context>`),
      event('<untrusted_context>\nCommand moved to background (PID: 12). Output hidden. Press Ctrl+B to view.\n</untrusted_context>'),
      event([{ text: shell(bigOutput(3000, 5, 'error: x')) }]),
      'not json',
      '',
    ];
    for (const stdin of cases) {
      const res = runHook(stdin);
      expect(res.status).toBe(0);
      expect(res.stdout).toBe('');
    }
    expect(fs.existsSync(path.join(projectTemp, 'tool-outputs'))).toBe(false);
  });

  it('takes its thresholds from the environment', () => {
    const small = event(shell(bigOutput(40, 20, 'FAILED: x')));
    expect(runHook(small).stdout).toBe('');
    expect(JSON.parse(runHook(small, { SPILLWAY_MAX_INLINE_BYTES: '200' }).stdout).hookSpecificOutput.tailToolCallRequest.name).toBe('read_file');
  });

  it('leaves the output alone, with a word on stderr, when there is no transcript path or the folder cannot be written', () => {
    const none = runHook(event(shell(bigOutput(3000, 5, 'error: x')), { transcript_path: '' }));
    expect(none.status).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/left unchanged/);
    fs.mkdirSync(path.join(projectTemp, 'tool-outputs'));
    fs.symlinkSync(os.tmpdir(), path.join(projectTemp, 'tool-outputs', 'session-0a1b2c3d-aaaa-bbbb-cccc-000000000001'));
    const symlinked = runHook(event(shell(bigOutput(3000, 5, 'error: x'))));
    expect(symlinked.status).toBe(0);
    expect(symlinked.stdout).toBe('');
    expect(symlinked.stderr).toMatch(/spillway/);
  });
});
