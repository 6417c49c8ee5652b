// Real tools failing in the middle of a long log, spilled through the built CLI: their own failure lines
// (as this machine's tools print them, not as a test writes them) must be in what the model is shown. Only
// tools every Debian-like machine that cloned this repository has: bash, dash, coreutils, sed, tar, git, node, npm, and
// the TypeScript compiler `npm ci` installs.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../unit/spill/temp-dirs';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');

/** [what fails, the command (run by bash in a fresh folder), a word of the line that must reach the model]. */
const CASES: Array<[string, string, string]> = [
  ['a full disk', 'echo data > f && cp f /dev/full', 'No space left on device'],
  ['bash: an unknown command', 'frobnicate_spillway_test', 'command not found'],
  ["dash: an unknown command", "sh -c 'frobnicate_spillway_test'", 'not found'],
  ['bash: an unset variable under set -u', `bash -c 'set -u; echo "$release_tag"'`, 'unbound variable'],
  ["a script's test with too many words", `printf 'v="1 2"\n[ $v = 1 ]\n' > check.sh && bash check.sh`, 'too many arguments'],
  ['sed: an unfinished command', "sed 's/a' /dev/null", 'unterminated'],
  ['node: an uncaught exception', `node -e "throw new Error('boom in the widget')"`, 'boom in the widget'],
  ['node: a stack overflow', 'node -e "const f = () => f(); f()"', 'Maximum call stack size exceeded'],
  ['git: a merge conflict', 'git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m a && echo a > f && git add f && git -c user.email=a@b -c user.name=a commit -qm b && git checkout -qb x && echo b > f && git -c user.email=a@b -c user.name=a commit -qam c && git checkout -q - && echo c > f && git -c user.email=a@b -c user.name=a commit -qam d && git -c user.email=a@b -c user.name=a merge x', 'CONFLICT'],
  ['git: outside a repository', 'cd / && GIT_CEILING_DIRECTORIES=/ git status', 'not a git repository'],
  ['ls: a missing folder', 'ls ./missing-folder', 'No such file or directory'],
  ['sort: a folder', 'mkdir d && sort d', 'Is a directory'],
  ['tar: an unknown option', 'tar --frobnicate', 'frobnicate'],
  ['npm: a missing script', `echo '{"name":"x","version":"1.0.0"}' > package.json && npm run frobnicate`, 'Missing script'],
  ['tsc: a type error', `printf 'const n: number = "a";\\nexport {};\\n' > x.ts && node ${JSON.stringify(path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc'))} --noEmit x.ts`, 'error TS2322'],
];

const noise = (tag: string) => Array.from({ length: 3000 }, (_, i) => `[${tag} ${String(i).padStart(6, '0')}] step ok, 0 failed, cache hit`).join('\n');

beforeAll(() => {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'pipe' });
  if (!existsSync(cli)) throw new Error('build produced no dist/cli.js');
});

/** The tool's output (stdout and stderr), run by bash in a fresh folder, in the middle of a 300 KB log, spilled through the CLI: what the model is shown. */
function spilledInTheMiddle(command: string): { output: string; digest: string } {
  const cwd = tempDir('spillway-real-tool-');
  const run = spawnSync('bash', ['-c', `(${command}) 2>&1`], { cwd, encoding: 'utf8', env: { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' } });
  expect(run.status, run.stdout).not.toBe(0);
  const log = path.join(cwd, 'build.log');
  writeFileSync(log, `${noise('before')}\n${run.stdout}${noise('after')}\nbuild finished\n`);
  const r = spawnSync(process.execPath, [cli, 'spill', '--session', 's', '--tool', 'Bash', '--root', path.join(cwd, 'spills')], { input: readFileSync(log), encoding: 'utf8' });
  expect(r.status).toBe(0);
  expect(r.stdout).toContain('Full text:'); // spilled: the model sees the digest, not the log
  return { output: run.stdout, digest: r.stdout };
}

describe('real tools failing in the middle of a 300 KB log', () => {
  it.each(CASES)('%s: its failure line reaches the model', (_, command, word) => {
    const { output, digest } = spilledInTheMiddle(command);
    const failure = output.split('\n').find((line) => line.includes(word));
    expect(failure, `the tool printed no line with ${JSON.stringify(word)}: ${output}`).toBeDefined();
    expect(digest).toContain(failure!.trim().slice(0, 80));
  });

  it("node: the model is shown where the error was thrown, the stack's first frame under it", () => {
    const { output, digest } = spilledInTheMiddle(`node -e "function widget() { throw new Error('boom in the widget') } widget()"`);
    const lines = output.split('\n');
    const at = lines.findIndex((line) => line.startsWith('Error: boom in the widget'));
    expect(lines[at + 1], output).toMatch(/^\s+at widget /);
    const shown = digest.split('\n');
    const verdict = shown.findIndex((line) => / Error: boom in the widget$/.test(line));
    const lineNo = Number(/^\[line (\d+)\]/.exec(shown[verdict] ?? '')?.[1]);
    expect(lineNo, digest).toBeGreaterThan(3000); // from the elided middle, numbered as in the blob
    expect(shown[verdict + 1]).toBe(`[line ${lineNo + 1}] ${lines[at + 1]}`);
  });
});
