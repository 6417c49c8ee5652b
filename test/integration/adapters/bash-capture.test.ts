// The Bash capture wrapper against real bash, run the way Claude Code 2.1.332
// runs a command (`bash -c "eval '<command>' [< /dev/null] && pwd -P >| <cwd
// file>"`, stdout and stderr into one file): for each shell edge case the
// wrapped command must leave the same output, exit code and working directory
// as the command alone; a large output becomes a digest naming a file that
// holds all of it.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeStdinIsDevNull, whyNotCapturable, whyShellRejects, wrapBashCommand } from '../../../src/adapters/bash-capture';
import { finishCommandFor } from '../../../src/adapters/claude-code-bash';
import { readManifest } from '../../../src/spill/manifest';

const repoRoot = path.resolve(__dirname, '../../..');
const hookJs = path.join(repoRoot, 'dist', 'hook.js');
let tmp: string;
let n = 0;

beforeAll(() => {
  if (!fs.existsSync(hookJs)) throw new Error('run `npm run build` first: dist/hook.js is missing');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-capture-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface Run {
  output: string;
  status: number | null;
  cwd: string | undefined;
}

/** Claude Code's quoting of the command for its eval, with its stdin rule. */
function claudeEval(command: string): string {
  const quoted = `'${command.replaceAll("'", `'"'"'`)}'`;
  return claudeStdinIsDevNull(command) ? `eval ${quoted} < /dev/null` : `eval ${quoted}`;
}

function runLikeClaude(command: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Run {
  const out = path.join(tmp, `out-${++n}`);
  const cwdFile = path.join(tmp, `cwd-${n}`);
  const fd = fs.openSync(out, 'w');
  const res = spawnSync('bash', ['-c', `${claudeEval(command)} && pwd -P >| '${cwdFile}'`], { cwd, env, stdio: ['pipe', fd, fd], input: '', timeout: 30_000 });
  fs.closeSync(fd);
  return { output: fs.readFileSync(out, 'utf8'), status: res.status, cwd: fs.existsSync(cwdFile) ? fs.readFileSync(cwdFile, 'utf8').trimEnd() : undefined };
}

/** A session folder like Claude Code's, with the capture file the PreToolUse hook would create. */
function captureFile(): string {
  const session = path.join(tmp, `session-${++n}`);
  fs.mkdirSync(path.join(session, 'spillway'), { recursive: true, mode: 0o700 });
  const file = path.join(session, 'spillway', `bash-toolu_${n}.txt`);
  fs.writeFileSync(file, '', { mode: 0o600, flag: 'wx' });
  return file;
}

function wrapped(command: string, inlineBytes = 4096): { command: string; file: string } {
  const file = captureFile();
  return { command: wrapBashCommand(command, { captureFile: file, inlineBytes, finishCommand: finishCommandFor(hookJs, false, 1024) }), file };
}

function workDir(): string {
  const dir = path.join(tmp, `work-${++n}`);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'input.txt'), 'one\ntwo\nthree\n');
  return dir;
}

const CASES: Record<string, string> = {
  'a plain echo': 'echo ok',
  'a command that sets PATH (the wrapper still finds its tools)': 'export PATH="$HOME/.nowhere"; echo "tests: 12 passed"',
  'a command that defines functions named like the tools': 'cat() { echo nope; }; wc() { echo 0; }; rm() { :; }; echo real',
  'stdout and stderr, in order': 'echo out; echo err >&2; echo out2',
  'stderr thrown away by the command': 'echo shown; ls /nonexistent-spillway 2>/dev/null; echo "status $?"',
  'stderr folded into a pipe by the command': '{ echo a; echo b >&2; } 2>&1 | tr a-z A-Z',
  'a pipe': "printf 'b\\na\\nc\\n' | sort | head -2",
  'a quoted heredoc': "cat <<'EOF'\nliteral $HOME `x`\nEOF\necho after",
  'an expanding heredoc': 'X=42\ncat <<EOF\nvalue $X\nEOF',
  'set -e': 'set -e\necho one\nfalse\necho two',
  'set -e with a failing pipe under pipefail': 'set -eo pipefail; false | true; echo reached',
  'a trailing comment': 'echo hi # a comment with "quotes',
  'a command that is all comment': '# nothing to run',
  'a line continuation': 'echo one \\\n  two',
  'a nested if and case': 'if true; then\n  case x in x) echo matched;; esac\nfi',
  'a backslash at the very end': 'echo a \\',
  'a function named false (the permission copy must still not run)': 'false() { return 0; }; echo once',
  'a command that reads stdin': 'cat; echo "after cat"',
  'read with no input': 'read -r x; echo "got [$x] $?"',
  'an input redirect': 'wc -l < input.txt',
  'exit with a code': 'echo before; exit 3',
  'a failing last command': 'echo x; false',
  'a child exit code': "sh -c 'exit 7'",
  'cd that persists': 'mkdir -p sub/deeper && cd sub/deeper && pwd',
  'cd then fail': 'cd sub 2>/dev/null || mkdir sub; cd sub; false',
  'variables and functions': 'f() { echo "in f $1"; }; Y=2; f $Y',
  'no output': 'true',
  'no trailing newline': "printf 'no newline'",
  'a >nul redirect Claude Code rewrites': 'echo hidden >nul; echo visible',
  'xtrace': 'set -x; echo traced',
  'a background job that finishes': 'sleep 0.1 & wait; echo waited',
  'noclobber': 'set -C; echo ok',
  'nounset': 'set -u; echo "$UNSET_SPILLWAY_VAR"',
};

// Commands bash does not parse cleanly: the wrapper, which also holds the command as code (for Claude Code's
// permission rules), would not parse either, so they are left unwrapped and fail as they always did.
const UNPARSED: Record<string, string> = {
  'unbalanced quotes': 'echo "never closed',
  'an unbalanced single quote': "echo it's",
  'a syntax error': 'if then fi',
  'a stray fi': 'echo a; fi',
  'a heredoc never closed': 'cat <<EOF\nno end line',
};

describe('the Bash capture wrapper leaves the command as it was', () => {
  for (const [name, command] of Object.entries(UNPARSED)) {
    it(`${name}: left unwrapped`, () => expect(whyShellRejects(command, 'bash')).toMatch(/does not parse/));
  }
  it('leaves commands that turn on verbose unwrapped (the shell would echo the exit handler)', () => {
    for (const command of ['set -v; echo loud', 'set -xv; make', 'set -o verbose', 'cd x && set -euv']) expect(whyNotCapturable(command), command).toMatch(/verbose/);
    for (const command of ['set -x; echo traced', 'set -euo pipefail', 'echo set -v', 'git reset -v']) expect(whyNotCapturable(command), command).toBeUndefined();
  });
  for (const [name, command] of Object.entries(CASES)) {
    it(name, () => {
      expect(whyShellRejects(command, 'bash')).toBeUndefined();
      const plainDir = workDir();
      const plain = runLikeClaude(command, plainDir);
      const w = wrapped(command);
      const dir = workDir();
      const got = runLikeClaude(w.command, dir);
      const same = (text: string, base: string) => text.replaceAll(base, '<work>');
      expect(same(got.output, dir)).toBe(same(plain.output, plainDir));
      expect(got.status).toBe(plain.status);
      expect(got.cwd && path.relative(dir, got.cwd)).toBe(plain.cwd && path.relative(plainDir, plain.cwd));
      // A small output is handed back whole and leaves no file behind.
      expect(fs.existsSync(w.file)).toBe(false);
    });
  }
});

describe('a large output', () => {
  // A failing build of ~300 KB: the failure line in the middle among decoys, a verdict at the end.
  const BUILD = `for i in $(seq 1 6000); do echo "[$i] compiling unit_$i ok (0 failed)"; if [ $i = 3100 ]; then echo "retrying (attempt 2)"; echo "error: linker failed on unit_3100.o" >&2; fi; done; echo "BUILD FAILED"; exit 2`;

  it('becomes a digest with the failure line, the exit code and the file, which holds all of it', async () => {
    const plainDir = workDir();
    const plain = runLikeClaude(BUILD, plainDir);
    expect(plain.output.length).toBeGreaterThan(200_000);
    const w = wrapped(BUILD);
    const got = runLikeClaude(w.command, workDir());
    expect(got.status).toBe(2);
    expect(got.output.length).toBeLessThan(3_000);
    expect(got.output).toContain('error: linker failed on unit_3100.o');
    expect(got.output).toContain('BUILD FAILED');
    expect(got.output).toContain('exited with code 2');
    expect(got.output).toContain(w.file);
    expect(fs.readFileSync(w.file, 'utf8')).toBe(plain.output);
    expect(fs.statSync(w.file).mode & 0o777).toBe(0o600);
    const { records } = await readManifest(path.dirname(w.file));
    expect(records).toMatchObject([{ file: path.basename(w.file), tool: 'Bash', bytes: Buffer.byteLength(plain.output) }]);
    expect((records[0]!.args as { command: string }).command).toBe(BUILD);
  });

  it('says the shell was ended, not "code 0", when a signal ends it mid-command; an `exit 0` stays code 0', async () => {
    const pidFile = path.join(tmp, `pid-${++n}`);
    const w = wrapped(`seq 1 60000; echo "error: lost the database"; echo $$ > '${pidFile}'; sleep 3`);
    const out = path.join(tmp, `out-${++n}`);
    const fd = fs.openSync(out, 'w');
    const shell = spawn('bash', ['-c', claudeEval(w.command)], { cwd: workDir(), stdio: ['ignore', fd, fd] });
    fs.closeSync(fd);
    while (!fs.existsSync(pidFile) || fs.readFileSync(pidFile, 'utf8').trim() === '') await new Promise((r) => setTimeout(r, 20));
    process.kill(Number(fs.readFileSync(pidFile, 'utf8')), 'SIGTERM');
    await new Promise((r) => shell.once('exit', r));
    const seen = fs.readFileSync(out, 'utf8');
    expect(seen).toContain('error: lost the database');
    expect(seen).toContain('the shell ended before the command finished');
    expect(seen).not.toContain('exited with code');

    const exited = runLikeClaude(wrapped('seq 1 60000; exit 0').command, workDir());
    expect(exited.output).toContain('exited with code 0');
  });

  it('keeps the exit code when bash read a startup file that ended in `return` (stdin a socket, no SHLVL)', () => {
    // As under a Claude Code started from no shell: bash then reads ~/.bashrc (and Debian's /etc/bash.bashrc,
    // whose first line is this one), and its EXIT trap names `return` whatever ran last.
    const home = workDir();
    fs.writeFileSync(path.join(home, '.bashrc'), '[ -z "$PS1" ] && return\n');
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
    delete env.SHLVL;
    expect(runLikeClaude(`trap 'echo "$BASH_COMMAND"' EXIT; exit 2`, workDir(), env).output).toBe('return\n');
    const w = wrapped(BUILD);
    const got = runLikeClaude(w.command, workDir(), env);
    expect(got.status).toBe(2);
    expect(got.output).toContain('error: linker failed on unit_3100.o');
    expect(got.output).toContain('exited with code 2');
    expect(got.output).not.toContain('the shell ended');
  });

  it('is printed whole when the finish step cannot run (the output as without Spillway)', () => {
    const file = captureFile();
    const command = wrapBashCommand(BUILD, { captureFile: file, inlineBytes: 4096, finishCommand: 'false' });
    const plain = runLikeClaude(BUILD, workDir());
    const got = runLikeClaude(command, workDir());
    expect(got.output).toBe(plain.output);
    expect(got.status).toBe(2);
  });
});
