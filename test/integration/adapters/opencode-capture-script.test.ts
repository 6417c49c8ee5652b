// The BASH_ENV capture script on real bash, run as opencode runs a bash tool
// call (`bash -c <command>`, stdin ignored, stdout and stderr read together):
// each command prints the same, in the same order, with the same exit code as
// without the script, and the capture file holds exactly what was printed.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CAPTURE_FILE_VAR, CAPTURE_SCRIPT, DONE_SUFFIX, USER_BASH_ENV_VAR } from '../../../src/adapters/opencode-capture-script';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-oc-script-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const script = path.join(tmp, 'capture.sh');
fs.writeFileSync(script, CAPTURE_SCRIPT);
let n = 0;

/** `bash -c COMMAND` with stdout and stderr into one file, read when bash exits (as opencode reads them, together). */
function runBash(command: string, env: NodeJS.ProcessEnv = {}) {
  const outFile = path.join(tmp, `out-${++n}.txt`);
  const fd = fs.openSync(outFile, 'w');
  try {
    const res = spawnSync('bash', ['-c', command], { cwd: tmp, env: { PATH: process.env.PATH, HOME: tmp, ...env }, stdio: ['ignore', fd, fd] });
    return { out: fs.readFileSync(outFile, 'utf8'), status: res.status, signal: res.signal };
  } finally {
    fs.closeSync(fd);
  }
}

/** Runs `command` with the capture; its capture is read once tee says it is done (as the plugin waits for it). */
async function captured(command: string, env: NodeJS.ProcessEnv = {}, waitForDone = true) {
  const file = path.join(tmp, `call-${++n}.log`);
  fs.writeFileSync(file, '', { mode: 0o600 });
  const res = runBash(command, { BASH_ENV: script, [CAPTURE_FILE_VAR]: file, ...env });
  while (waitForDone && !fs.existsSync(file + DONE_SUFFIX)) await new Promise((resolve) => setTimeout(resolve, 20));
  return { ...res, file, capture: fs.readFileSync(file, 'utf8'), done: fs.existsSync(file + DONE_SUFFIX) };
}

const SAME: string[] = [
  'echo ok',
  'printf "no newline"',
  'echo out; echo err >&2; echo out2',
  'for i in $(seq 1 3000); do echo "line $i"; [ $i = 1500 ] && echo "error: at $i" >&2; done; exit 2',
  'set -e; echo before; false; echo never',
  'set -o pipefail; echo x | grep y | cat; echo "status $?"',
  'cd /; pwd; exit 7',
  'cat <<EOF\nheredoc $HOME\nEOF',
  'echo "$((1 + 2))" && trap "echo bye" EXIT',
  'echo to-null >/dev/null; echo kept 2>/dev/null',
  'bash -c "echo inner \\$BASH_ENV-\\$' + CAPTURE_FILE_VAR + '"',
  'kill -TERM $$',
  'if then',
];

describe('the opencode capture script', () => {
  for (const command of SAME) {
    it(`changes nothing of ${JSON.stringify(command.slice(0, 50))} and captures all it printed`, async () => {
      const plain = runBash(command);
      const got = await captured(command);
      // A command's own EXIT trap replaces the script's wait for tee: bash may exit before the last bytes pass
      // (the plugin then hands the model the capture, which is whole).
      if (command.includes('trap')) expect(plain.out.startsWith(got.out)).toBe(true);
      else expect(got.out).toBe(plain.out);
      expect(got.status).toBe(plain.status);
      expect(got.signal).toBe(plain.signal);
      // The capture is the output less what bash itself prints about a syntax error before the script ran.
      if (command !== 'if then') expect(got.capture).toBe(plain.out);
      expect(got.done).toBe(true);
    });
  }

  it("still runs the user's own BASH_ENV, and a bash script the command starts sees it, not the capture", async () => {
    const mine = path.join(tmp, 'mine.sh');
    fs.writeFileSync(mine, 'echo "mine ran"\n');
    const got = await captured('bash -c "echo child"', { [USER_BASH_ENV_VAR]: mine });
    expect(got.out).toBe('mine ran\nmine ran\nchild\n');
    expect(runBash('bash -c "echo child"', { BASH_ENV: mine }).out).toBe(got.out);
    expect(got.capture).toBe(got.out);
  });

  it('returns while a background job still holds the output, the capture open for it', async () => {
    const got = await captured('(sleep 4; echo late) & echo now', {}, false);
    expect(got.out).toBe('now\n');
    expect(got.capture.startsWith('now\n')).toBe(true);
  });

  it('captures all of a long output even when its reader stops reading early', async () => {
    const file = path.join(tmp, `call-${++n}.log`);
    fs.writeFileSync(file, '', { mode: 0o600 });
    const res = spawnSync('bash', ['-c', 'env BASH_ENV="$1" ' + CAPTURE_FILE_VAR + '="$2" bash -c "seq 1 100000; echo end" | head -c 4', '_', script, file], { cwd: tmp, env: { PATH: process.env.PATH, HOME: tmp }, encoding: 'utf8' });
    expect(res.stdout).toBe('1\n2\n');
    while (!fs.existsSync(file + DONE_SUFFIX)) await new Promise((resolve) => setTimeout(resolve, 20));
    const capture = fs.readFileSync(file, 'utf8');
    expect(capture.split('\n').length).toBe(100002);
    expect(capture.endsWith('100000\nend\n')).toBe(true);
  });
});
