// The plugin's capture from start to finish without opencode: the environment
// `shell.env` hands bash, real bash filling the capture, and what
// `tool.execute.after` makes of it; then the catalog listing the result.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { finishCapture, opencodeCaptureDefaults, startCapture, type OpencodeCaptureOptions } from '../../../src/adapters/opencode-capture';
import { readManifest } from '../../../src/spill/manifest';
import { failingBuild, fullOutputOf } from './helpers/failing-build';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-oc-capture-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dataHome = path.join(tmp, 'data');
const opts: OpencodeCaptureOptions = { ...opencodeCaptureDefaults({ XDG_DATA_HOME: dataHome }), settleMs: 3000 };
let n = 0;

/** Runs `command` as opencode would with the plugin's environment; returns what opencode would show and the exit code. */
async function call(command: string, sessionId = 'ses_test') {
  const callId = `call_${++n}`;
  const { capture, env } = await startCapture(opts, sessionId, callId, {});
  // stdin as opencode gives it: none (on a socket, Debian's bash reads ~/.bashrc instead of BASH_ENV).
  const res = spawnSync('bash', ['-c', command], { cwd: tmp, env: { PATH: process.env.PATH, HOME: tmp, ...env }, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  return { capture, shown: res.stdout, exit: res.status };
}

describe('the opencode capture', () => {
  it('puts the capture in a private folder of the session, created exclusively', async () => {
    const { capture, env } = await startCapture(opts, 'ses_private', 'call_x', { BASH_ENV: '/etc/mine.sh' });
    expect(capture.file).toBe(path.join(dataHome, 'opencode', 'spillway', 'ses_private', 'call_x.log'));
    expect(fs.statSync(capture.file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(capture.file)).mode & 0o777).toBe(0o700);
    expect(env.SPILLWAY_OPENCODE_BASH_ENV).toBe('/etc/mine.sh');
    expect(fs.readFileSync(env.BASH_ENV!, 'utf8')).toContain('SPILLWAY_OPENCODE_CAPTURE');
    await expect(startCapture(opts, 'ses_private', 'call_x', {})).rejects.toThrow(/EEXIST/);
  });

  it('refuses a session folder that is a symlink, writing nothing through it', async () => {
    const elsewhere = path.join(tmp, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.symlinkSync(elsewhere, path.join(opts.root, 'ses_link'));
    await expect(startCapture(opts, 'ses_link', 'call_1', {})).rejects.toThrow(/not a folder/);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it('turns a big failing output into a digest with the failure line, exit code and path, recorded in the manifest', async () => {
    const build = failingBuild(120_000, 2, () => 0.37, 3);
    const { capture, shown, exit } = await call(build.command);
    const digest = await finishCapture(opts, capture, { command: build.command, exit, shown });
    expect(digest).toContain(build.failureLine);
    expect(digest).toContain(`[spillway: the command exited with code 2; its complete output (stdout and stderr) is in ${capture.file}]`);
    expect(fs.readFileSync(capture.file, 'utf8')).toBe(fullOutputOf(build, tmp));
    const { records } = await readManifest(path.dirname(capture.file));
    expect(records.at(-1)).toMatchObject({ file: path.basename(capture.file), tool: 'bash', toolCallId: capture.callId, sessionId: 'ses_test', bytes: fs.statSync(capture.file).size });
    expect(fs.existsSync(capture.file + '.done')).toBe(false);
  });

  it('leaves a small output alone and deletes its capture', async () => {
    const { capture, shown, exit } = await call('echo ok; echo warn >&2; exit 1');
    expect(await finishCapture(opts, capture, { command: 'x', exit, shown })).toBeUndefined();
    expect(fs.existsSync(capture.file)).toBe(false);
  });

  it('hands over a small output whole when what opencode shows lost its end', async () => {
    const { capture, exit } = await call('seq 1 50');
    const whole = Array.from({ length: 50 }, (_, i) => `${i + 1}\n`).join('');
    expect(await finishCapture(opts, capture, { command: 'seq 1 50', exit, shown: whole.slice(0, 20) })).toBe(whole);
    const empty = await call('seq 1 3');
    expect(await finishCapture(opts, empty.capture, { command: 'seq 1 3', exit: 0, shown: '(no output)' })).toBe('1\n2\n3\n');
    // Text that is not a cut of the capture (opencode's own messages) is left as it is.
    const other = await call('seq 1 3');
    expect(await finishCapture(opts, other.capture, { command: 'seq 1 3', exit: 0, shown: 'something else' })).toBeUndefined();
  });

  it('leaves a stopped command (no exit code: timeout, abort) as opencode shows it, keeping nothing', async () => {
    const build = failingBuild(30_000, 1, () => 0.5, 0);
    const { capture, shown } = await call(build.command);
    expect(await finishCapture(opts, capture, { command: build.command, exit: null, shown })).toBeUndefined();
    expect(fs.existsSync(capture.file)).toBe(false);
  });

  it('is listed by spillway list under opencode, its session and tool call', () => {
    const cli = path.resolve(__dirname, '../../../dist/cli.js');
    const res = spawnSync(process.execPath, [cli, 'list', '--json'], { env: { ...process.env, HOME: tmp, XDG_DATA_HOME: dataHome, XDG_STATE_HOME: path.join(tmp, 'state'), XDG_CONFIG_HOME: path.join(tmp, 'config') }, encoding: 'utf8' });
    expect(res.status, res.stderr).toBe(0);
    const sessions = (JSON.parse(res.stdout) as { sessions: Array<{ source: string; id: string; blobs: Array<{ toolCallId: string; tool: string }> }> }).sessions;
    const mine = sessions.filter((s) => s.id === 'ses_test');
    expect(mine).toHaveLength(1);
    expect(mine[0]!.source).toBe('opencode');
    expect(mine[0]!.blobs.map((b) => [b.tool, b.toolCallId])).toEqual([['bash', 'call_1']]);
  });
});
