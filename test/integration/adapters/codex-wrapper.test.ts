// The Codex wrapper on real bash, run as Codex runs a command (`bash -c`; Codex
// adds `-l`, whose profile only costs time here and is the same with or without the wrapper):
// for each case the same output, byte for byte, and the same exit status as
// the command alone when the output is small; a large one becomes a digest
// naming the final path, and the hook's mover puts the file holding all of it
// there; a capture file that cannot be made leaves the output going out as it
// would have.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexFinishCommand, codexPipeDigestCommand, wrapCodexCommand } from '../../../src/adapters/codex-capture';
import { finalCapturePath } from '../../../src/adapters/codex-final-path';
import { moveCodexCaptures } from '../../../src/adapters/codex-mover';
import { makeStagingFolder } from '../../../src/adapters/codex-staging';

const repoRoot = path.resolve(__dirname, '../../..');
const hookScript = path.join(repoRoot, 'dist', 'codex-hook.js');
let tmp: string;
let n = 0;

beforeAll(() => {
  if (!fs.existsSync(hookScript)) throw new Error('run `npm run build` first: dist/codex-hook.js is missing');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-codex-wrap-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function run(command: string, cwd: string): { out: string; status: number | null } {
  // Codex merges stdout and stderr into one stream; so does this.
  const res = spawnSync('bash', ['-c', `exec 2>&1; ${command}`], { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { out: res.stdout, status: res.status };
}

const SESSION = '0190aaaa-bbbb-7ccc-8ddd-eeeeffff0000';

/** The wrapper as the hook makes it: the capture in a private folder under $TMPDIR, the digest naming the final path. */
async function wrapped(command: string, opts: { finalFile?: string } = {}): Promise<{ wrapper: string; file: string; finalFile: string; callId: string }> {
  const callId = `call_${++n}`;
  const folder = await makeStagingFolder({ TMPDIR: tmp }, SESSION, callId);
  const file = path.join(folder, `bash-${callId}.txt`);
  const finalFile = opts.finalFile ?? finalCapturePath(path.join(tmp, 'codex-home'), SESSION, callId);
  const wrapper = wrapCodexCommand(command, { captureFile: file, finalFile, inlineBytes: 4096, finishCommand: codexFinishCommand(hookScript, false, 2048) });
  return { wrapper, file, finalFile, callId };
}

describe('small outputs: as without Spillway', () => {
  it.each([
    ['echo ok', 'echo ok'],
    ['exit status', 'echo out; exit 3'],
    ['stderr and stdout in order', 'echo one; echo two >&2; echo three'],
    ['a heredoc at the end', 'cat <<EOF\nline $((1+1))\nEOF'],
    ['a trailing comment', 'echo hi # a comment'],
    ['set -e', 'set -e; false; echo never'],
    ['a pipe with pipefail', 'set -o pipefail; false | cat; echo "status $?"'],
    ['a function and a subshell', 'f() { echo in f; return 4; }; (f); echo "got $?"'],
    ['no trailing newline', 'printf "no newline"'],
    ['binary bytes', "printf '\\x00\\xff\\x01'"],
    ['exit from a nested shell', 'bash -c "exit 7"'],
    ['a background job', 'sleep 0.2 & echo started; wait'],
  ])('%s', async (_name, command) => {
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    const alone = run(command, cwd);
    const { wrapper, file } = await wrapped(command);
    const withSpillway = run(wrapper, cwd);
    expect(withSpillway).toEqual(alone);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe('large outputs', () => {
  it('a failing 250 KB build becomes a digest with the failure line, the exit code and the final path; the mover puts all of it there', async () => {
    const command = 'for i in $(seq 1 8000); do echo "[$i] unit ok"; done; echo "error: the linker failed at unit 4321" >&2; for i in $(seq 8001 9000); do echo "[$i] unit ok"; done; exit 2';
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    const alone = run(command, cwd);
    const { wrapper, file, finalFile, callId } = await wrapped(command);
    const seen = run(wrapper, cwd);
    expect(seen.status).toBe(2);
    expect(seen.out).toContain('error: the linker failed at unit 4321');
    expect(seen.out).toContain('[9000] unit ok');
    expect(seen.out).toContain(`[spillway: the command exited with code 2; its complete output (stdout and stderr) is in ${finalFile}]`);
    expect(seen.out.length).toBeLessThan(4000);
    expect(fs.readFileSync(file, 'utf8')).toBe(alone.out);
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    const moved = await moveCodexCaptures({ env: { TMPDIR: tmp }, codexHome: path.join(tmp, 'codex-home'), sessionId: SESSION, callId });
    expect(moved).toEqual([finalFile]);
    expect(fs.readFileSync(finalFile, 'utf8')).toBe(alone.out);
    expect((fs.statSync(finalFile).mode & 0o777).toString(8)).toBe('600');
    expect((fs.statSync(path.dirname(finalFile)).mode & 0o777).toString(8)).toBe('700');
    expect(fs.existsSync(path.dirname(file))).toBe(false);
    const manifest = fs.readFileSync(path.join(path.dirname(finalFile), 'spillway.jsonl'), 'utf8');
    expect(manifest).toContain(`"toolCallId":"${callId}"`);
  });

  it('a finish step that fails prints the output whole', async () => {
    const command = 'seq 1 5000; exit 1';
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    // Not a folder the finish step accepts (no `spillway` parent): it refuses, and the wrapper prints the capture.
    const { wrapper, file } = await wrapped(command, { finalFile: path.join(tmp, 'elsewhere', 'session', 'bash-call_y.txt') });
    const alone = run(command, cwd);
    const seen = run(wrapper, cwd);
    expect(seen.status).toBe(alone.status);
    expect(seen.out).toMatch(/^spillway: could not digest .*, printing it whole: /);
    expect(seen.out.slice(seen.out.indexOf('\n') + 1)).toBe(alone.out);
    // Printed whole, named nowhere: removed.
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe('a capture file that cannot be made', () => {
  it('leaves the command\'s output going out as it would have (a folder that is not there)', () => {
    const command = 'seq 1 5000; echo done >&2; exit 5';
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    const file = path.join(tmp, 'missing', 'spillway', 'session', 'bash-call_x.txt');
    const wrapper = wrapCodexCommand(command, { captureFile: file, finalFile: finalCapturePath(tmp, SESSION, 'call_x'), inlineBytes: 4096, finishCommand: codexFinishCommand(hookScript, false, 2048) });
    expect(run(wrapper, cwd)).toEqual(run(command, cwd));
    expect(fs.existsSync(file)).toBe(false);
  });

  it('never writes through a file already in its place', async () => {
    const { wrapper, file } = await wrapped('seq 1 5000');
    const target = path.join(tmp, 'target.txt');
    fs.writeFileSync(target, 'keep\n');
    fs.symlinkSync(target, file);
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    expect(run(wrapper, cwd)).toEqual(run('seq 1 5000', cwd));
    expect(fs.readFileSync(target, 'utf8')).toBe('keep\n');
  });
});

describe('no capture file can be made (a read-only sandbox): the digest on a pipe', () => {
  const SMALL = [
    'echo ok',
    'echo out; exit 3',
    'echo one; echo two >&2; echo three',
    'cat <<EOF\nline $((1+1))\nEOF',
    'set -e; false; echo never',
    'printf "no newline"',
    "printf '\\x00\\xff\\x01'",
    'bash -c "exit 7"',
    'sleep 0.2 & echo started; wait',
    'head -c 4096 /dev/zero | tr "\\0" x',
  ];
  /** The wrapper as the hook makes it, its capture folder missing (nothing can be created there). */
  const piped = (command: string, digestCommand = codexPipeDigestCommand(hookScript, false, 4096, 2048)): string =>
    wrapCodexCommand(command, {
      captureFile: path.join(tmp, 'missing', 'bash-call_ro.txt'),
      finalFile: finalCapturePath(path.join(tmp, 'codex-home'), SESSION, 'call_ro'),
      inlineBytes: 4096,
      finishCommand: codexFinishCommand(hookScript, false, 2048),
      digestCommand,
    });

  it.each(SMALL)('a small output is as without Spillway: %s', (command) => {
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    expect(run(piped(command), cwd)).toEqual(run(command, cwd));
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('a large output becomes a digest: head, the failure line with its number, tail, exit code; the command\'s status stays', () => {
    const command = 'for i in $(seq 1 8000); do echo "[$i] unit ok"; done; echo "error: the linker failed at unit 4321" >&2; for i in $(seq 8001 9000); do echo "[$i] unit ok"; done; exit 2';
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    const seen = run(piped(command), cwd);
    expect(seen.status).toBe(2);
    expect(seen.out.startsWith('[1] unit ok\n')).toBe(true);
    expect(seen.out).toContain('[line 8001] error: the linker failed at unit 4321');
    expect(seen.out).toContain('[9000] unit ok\n[spillway: the command exited with code 2; its whole output could not be kept: the sandbox lets nothing be written]\n');
    expect(seen.out.length).toBeLessThan(2300);
  });

  it('a background job holding the pipe does not hold the digest: it comes when the command ends', () => {
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    // The job would print after the command ended; the digest does not wait for it (no wall clock: its line is simply not there).
    const command = '(sleep 30; echo late-line) & seq 1 3000; echo "error: x failed"; seq 3001 6000; exit 4';
    const res = spawnSync('bash', ['-c', `exec 2>&1; ${piped(command)}`], { cwd, encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
    expect(res.status).toBe(4);
    expect(res.stdout).toContain('[line 3001] error: x failed');
    expect(res.stdout).toContain('[spillway: the command exited with code 4;');
    expect(res.stdout).not.toContain('late-line');
  });

  it('a digest that cannot start lets the output through whole', () => {
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    const command = 'seq 1 5000; echo done >&2; exit 5';
    const seen = run(piped(command, `${process.execPath} ${path.join(tmp, 'no-such-script.js')}`), cwd);
    const alone = run(command, cwd);
    expect(seen.status).toBe(5);
    // Node says why on stderr first; then every byte of the output.
    expect(seen.out.endsWith(alone.out)).toBe(true);
    expect(seen.out).toContain('no-such-script.js');
  });
});

describe('the digest process on a pipe', () => {
  it('streams 100 MB in bounded memory: head, the failure line with its number, tail, the status from fd 3', async () => {
    const { spawn } = await import('node:child_process');
    // Reports the process's peak memory as it exits.
    const preload = path.join(tmp, 'maxrss.js');
    fs.writeFileSync(preload, "process.on('exit', () => process.stderr.write(`maxrss ${process.resourceUsage().maxRSS}\\n`));\n");
    const child = spawn(process.execPath, ['-r', preload, hookScript, 'codex', 'digest', '4096', '2048'], { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const line = '[n] unit is fine ok\n'; // 20 bytes: 50 MB is 2,500,000 lines
    const chunk = Buffer.from(line.repeat(50_000));
    const write = (b: Buffer | string): Promise<void> => new Promise((resolve) => (child.stdin!.write(b) ? resolve() : child.stdin!.once('drain', resolve)));
    for (let i = 0; i < 50; i++) await write(chunk);
    await write('error: the one failure in the middle\n');
    for (let i = 0; i < 50; i++) await write(chunk);
    await write('the last line\n');
    (child.stdio[3] as NodeJS.WritableStream).write('2\n');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(out.startsWith(line)).toBe(true);
    expect(out).toContain('[line 2500001] error: the one failure in the middle');
    expect(out.endsWith(`${line}the last line\n[spillway: the command exited with code 2; its whole output could not be kept: the sandbox lets nothing be written]\n`)).toBe(true);
    const maxRss = Number(/maxrss (\d+)/.exec(err)?.[1]) * 1024;
    // Node itself takes some 40-60 MB; the 100 MB that went through are not held.
    expect(maxRss).toBeGreaterThan(0);
    expect(maxRss).toBeLessThan(100 << 20);
  });
});
