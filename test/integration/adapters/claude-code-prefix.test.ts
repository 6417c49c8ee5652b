// dist/claude-code-prefix.sh run as Claude Code runs it (`<script> -s <shell> <node> '<generated string>'`,
// stdout and stderr one output file opened for appending), by a real sh, in a Claude config folder made here.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/spill/manifest';

const repoRoot = path.resolve(__dirname, '../../..');
const script = path.join(repoRoot, 'dist', 'claude-code-prefix.sh');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-prefix-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SESSION = '5d3c1b7e-0000-4000-8000-00000000abcd';
let n = 0;
let configDir: string;
let sessionDir: string;
let workDir: string;

beforeEach(() => {
  const root = path.join(tmp, `case-${++n}`);
  configDir = path.join(root, 'claude');
  workDir = path.join(root, 'work');
  const project = path.join(configDir, 'projects', '-work');
  fs.mkdirSync(project, { recursive: true });
  fs.mkdirSync(workDir);
  fs.writeFileSync(path.join(project, `${SESSION}.jsonl`), '{}\n');
  sessionDir = path.join(project, SESSION);
});

/** The string Claude Code 2.1.332 hands the prefix for `command` (its shape, with a snapshot that does not exist). */
function generated(command: string): string {
  const quoted = `'${command.replace(/'/g, `'\\''`)}'`;
  return `source ${path.join(tmp, 'no-snapshot.sh')} 2>/dev/null || true && eval ${quoted} < /dev/null && pwd -P >| ${path.join(workDir, '.cwd')}`;
}

/** Runs the prefix with stdout and stderr the task file `<id>.output` (O_APPEND, as Claude Code opens it); returns its content after. */
function runPrefix(command: string, env: NodeJS.ProcessEnv = {}, args?: string[]): { status: number | null; output: string; outputFile: string } {
  const outputFile = path.join(workDir, `b${n}task.output`);
  const fd = fs.openSync(outputFile, 'a', 0o600);
  try {
    const res = spawnSync('/bin/sh', [script, ...(args ?? ['-s', '/bin/bash', process.execPath]), generated(command)], {
      cwd: workDir,
      stdio: ['ignore', fd, fd],
      env: { PATH: process.env.PATH, HOME: tmp, CLAUDE_CONFIG_DIR: configDir, CLAUDE_CODE_SESSION_ID: SESSION, ...env },
    });
    return { status: res.status, output: fs.readFileSync(outputFile, 'utf8'), outputFile };
  } finally {
    fs.closeSync(fd);
  }
}

const BIG = `for i in $(seq 1 3000); do echo "step $i ok"; done; echo "error: disk quota exceeded in shard 9" >&2; seq 3001 6000; exit 3`;

describe('claude-code-prefix.sh', () => {
  it('leaves a small output exactly as the command wrote it, keeps its exit status, writes nothing', () => {
    const res = runPrefix(`echo out; echo err >&2; printf 'a\\r\\nb'; exit 4`);
    expect(res.status).toBe(4);
    expect(res.output).toBe('out\nerr\na\r\nb');
    expect(fs.existsSync(sessionDir)).toBe(false);
  });

  it('replaces a large output by a digest naming the whole output, kept 0600 in a 0700 folder and in the manifest', async () => {
    const res = runPrefix(BIG);
    expect(res.status).toBe(3);
    expect(res.output.length).toBeLessThan(4_000);
    expect(res.output).toContain('error: disk quota exceeded in shard 9');
    expect(res.output).toContain('exited with code 3');
    const file = /(\/\S+\/spillway\/bash-[^\s\]]+\.txt)/.exec(res.output)?.[1];
    expect(file).toBe(path.join(sessionDir, 'spillway', `bash-b${n}task.txt`));
    const whole = spawnSync('bash', ['-c', `(${BIG}) 2>&1`], { encoding: 'utf8' }).stdout;
    expect(fs.readFileSync(file!, 'utf8')).toBe(whole);
    expect(fs.statSync(file!).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file!)).mode & 0o777).toBe(0o700);
    const { records } = await readManifest(path.dirname(file!));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ tool: 'Bash', file: path.basename(file!), args: { command: BIG } });
  });

  it('takes its threshold from SPILLWAY_MAX_INLINE_BYTES', () => {
    expect(runPrefix('seq 1 2000', { SPILLWAY_MAX_INLINE_BYTES: '100000' }).output).toBe(spawnSync('seq', ['1', '2000'], { encoding: 'utf8' }).stdout);
    expect(runPrefix('seq 1 20', { SPILLWAY_MAX_INLINE_BYTES: '10' }).output).toContain('exited with code 0');
  });

  it('leaves a large output whole when no session folder can be found, or when the spill folder is a symlink', () => {
    const lost = runPrefix(BIG, { CLAUDE_CODE_SESSION_ID: 'no-such-session' });
    expect(lost.status).toBe(3);
    expect(lost.output).toContain('step 3000 ok\nerror: disk quota exceeded in shard 9\n3001\n');
    expect(lost.output.trimEnd().endsWith('6000')).toBe(true);

    const elsewhere = path.join(tmp, `elsewhere-${n}`);
    fs.mkdirSync(elsewhere);
    fs.mkdirSync(sessionDir);
    fs.symlinkSync(elsewhere, path.join(sessionDir, 'spillway'));
    const linked = runPrefix(BIG);
    expect(linked.status).toBe(3);
    expect(linked.output.trimEnd().endsWith('6000')).toBe(true);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it("runs the user's own prefix in its place (split at its last ' -' as Claude Code does) and still digests", () => {
    const log = path.join(tmp, `chained-${n}.log`);
    const user = path.join(tmp, `user prefix ${n}.sh`);
    fs.writeFileSync(user, `#!/bin/sh\necho "$1" > '${log}'\nshift\nexec bash -c "$1"\n`, { mode: 0o755 });
    const res = runPrefix(BIG, { SPILLWAY_CHAINED_SHELL_PREFIX: `${user} -tag` });
    expect(fs.readFileSync(log, 'utf8')).toBe('-tag\n');
    expect(res.status).toBe(3);
    expect(res.output).toContain('error: disk quota exceeded in shard 9');
    expect(res.output).toContain('exited with code 3');
  });

  it('keeps a cd for the next call (the generated cwd step still runs in the same shell)', () => {
    fs.mkdirSync(path.join(workDir, 'sub'));
    runPrefix('cd sub');
    expect(fs.readFileSync(path.join(workDir, '.cwd'), 'utf8')).toBe(`${fs.realpathSync(path.join(workDir, 'sub'))}\n`);
  });

  it('passes through output that is not a file (a pipe) untouched', () => {
    const res = spawnSync('/bin/sh', [script, '-s', '/bin/bash', process.execPath, generated('seq 1 3000; exit 2')], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, CLAUDE_CONFIG_DIR: configDir, CLAUDE_CODE_SESSION_ID: SESSION },
    });
    expect(res.status).toBe(2);
    expect(res.stdout).toBe(spawnSync('seq', ['1', '3000'], { encoding: 'utf8' }).stdout);
    expect(fs.existsSync(sessionDir)).toBe(false);
  });

  it('says how to call it when called wrong', () => {
    const res = spawnSync('/bin/sh', [script], { encoding: 'utf8' });
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/usage/);
  });
});
