// list, show --lines, grep and clean on an s3:// root (a real Ceph RGW) give the answers they give on the local
// copy; show reads a slice by ranged GETs, grep stops at --max, clean deletes exactly the listed objects.
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { execFileSync, spawn } from 'node:child_process';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type Proxy } from '../../s3/proxy';
import { startRgw, type Rgw } from '../../s3/rgw';
import { uploadAll } from '../../s3/upload-all';
import { tempDir } from '../../unit/spill/temp-dirs';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
const BUCKET = 'read-spills';
const ROOT = `s3://${BUCKET}/team/ci`;
let rgw: Rgw;
let proxy: Proxy;
let env: NodeJS.ProcessEnv;
let localRoot: string;
const locals: string[] = [];
const remotes: string[] = [];

/** The built CLI, run without blocking this process (the proxy the CLI talks to lives in it). */
function cliRun(args: string[], extra: NodeJS.ProcessEnv = {}, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env, ...extra } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** Seeded lines: a log with some FAIL lines and odd characters. */
function output(seed: number, lines: number): string {
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(x % 97 === 0 ? `FAIL case ${i} — naïve ${x.toString(16)}` : `ok ${i} ${'.'.repeat(x % 40)} ${x}`);
  }
  return out.join('\n') + (seed % 2 ? '\n' : '');
}

beforeAll(async () => {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'pipe' });
  rgw = await startRgw();
  await rgw.createBucket(BUCKET);
  proxy = await startProxy(rgw.endpoint);
  const home = tempDir('spillway-s3read-');
  localRoot = path.join(home, 'spills');
  env = { ...rgw.env, XDG_STATE_HOME: home, SPILLWAY_UPLOAD_QUEUE: path.join(home, 'uploads'), SPILLWAY_STORE: ROOT };
  const sizes = [3000, 5000, 250_000, 4000];
  for (const [i, lines] of sizes.entries()) {
    const r = await cliRun(['spill', '--session', i < 2 ? 'run-1' : 'run-2', '--tool', 'Bash', '--call-id', `c${i}`, '--root', localRoot, '--json'], {}, output(i + 1, lines));
    const ref = JSON.parse(r.stdout).ref;
    locals.push(ref.locator);
    remotes.push(/`spillway show (s3:\S+) --lines/.exec(ref.retrievalHint)![1]!);
  }
  // The detached uploaders may have taken some first; in the end the queue is empty.
  await uploadAll(env.SPILLWAY_UPLOAD_QUEUE!, () => cliRun(['upload']));
  // Keys that are not blobs of the prefix: clean must leave them.
  const c = rgw.client();
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'team/other/spillway/run-1/x.txt', Body: 'outside the prefix' }));
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'team/ci/README', Body: 'not a blob' }));
});
afterAll(async () => {
  await proxy?.close();
  await rgw?.stop();
});

describe('reading an s3:// root (real RGW)', () => {
  it('list shows every session and blob with the sizes of the local copies', async () => {
    const r = await cliRun(['list', '--root', ROOT, '--json']);
    expect(r.code).toBe(0);
    const listed = JSON.parse(r.stdout).sessions as Array<{ id: string; source: string; blobs: Array<{ path: string; bytes: number }> }>;
    expect(listed.map((s) => s.id).sort()).toEqual(['run-1', 'run-2']);
    const local = JSON.parse((await cliRun(['list', '--root', localRoot, '--no-default-roots', '--json'])).stdout).sessions.flatMap((s: { blobs: Array<{ path: string; bytes: number }> }) => s.blobs);
    const byPath = new Map(listed.flatMap((s) => s.blobs).map((b) => [b.path, b.bytes]));
    for (const [i, url] of remotes.entries()) expect(byPath.get(url)).toBe(local.find((b: { path: string }) => b.path === locals[i])?.bytes);
    expect(byPath.size).toBe(4);
  });

  it('show --lines gives the local slice; on the big blob it reads a window, not the object', async () => {
    for (const [i, range] of [[0, '1:5'], [1, '4990:5010'], [2, '249990:250000'], [2, '120000:120020'], [3, '7:7']] as const) {
      const remote = await cliRun(['show', remotes[i]!, '--lines', range], { AWS_ENDPOINT_URL: proxy.endpoint });
      const local = await cliRun(['show', locals[i]!, '--lines', range, '--root', localRoot, '--no-default-roots']);
      expect(remote.stdout).toBe(local.stdout);
      expect(remote.stderr.replace(remotes[i]!, 'X')).toBe(local.stderr.replace(locals[i]!, 'X'));
    }
    const before = proxy.bytesOut;
    await cliRun(['show', remotes[2]!, '--lines', '249990:250000'], { AWS_ENDPOINT_URL: proxy.endpoint });
    const read = proxy.bytesOut - before;
    const size = Number(JSON.parse((await cliRun(['list', '--root', ROOT, '--json'])).stdout).sessions.find((s: { id: string }) => s.id === 'run-2').blobs.find((b: { path: string }) => b.path === remotes[2]).bytes);
    expect(size).toBeGreaterThan(8 << 20);
    expect(read).toBeLessThan(3 << 20);
  });

  it('grep finds the matches the local grep finds, in every blob; --max stops early', async () => {
    // Every match, not the first 1,000 of each: the local search's order is not the listing's.
    const remote = await cliRun(['grep', 'FAIL case', '--root', ROOT, '--json', '--max', '100000']);
    const local = await cliRun(['grep', 'FAIL case', '--root', localRoot, '--no-default-roots', '--json', '--max', '100000']);
    const key = (m: { path: string; line: number; text: string }) => `${m.path}:${m.line}:${m.text}`;
    const toRemote = new Map(locals.map((l, i) => [l, remotes[i]!]));
    const want = JSON.parse(local.stdout).matches.map((m: { path: string; line: number; text: string }) => key({ ...m, path: toRemote.get(m.path)! })).sort();
    expect(want.length).toBeGreaterThan(100);
    expect(JSON.parse(remote.stdout).matches.map(key).sort()).toEqual(want);
    const capped = await cliRun(['grep', 'FAIL', '--root', ROOT, '--max', '3']);
    expect(capped.stdout.trim().split('\n')).toHaveLength(3);
    expect(capped.stderr).toContain('stopped at 3 matches');
    expect((await cliRun(['grep', 'no such text anywhere', '--root', ROOT])).code).toBe(1);
  });

  it('clean --session deletes exactly that session\'s blobs and records under the prefix, nothing else', async () => {
    const keysNow = async () => ((await rgw.client().send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((o) => o.Key!).sort();
    const before = await keysNow();
    const dry = await cliRun(['clean', '--root', ROOT, '--session', 'run-1']);
    expect(dry.stdout).toContain('Would delete 2 blob(s)');
    expect(await keysNow()).toEqual(before);
    const r = await cliRun(['clean', '--root', ROOT, '--session', 'run-1', '--yes', '--json']);
    expect(r.code).toBe(0);
    const gone = before.filter((k) => k.startsWith('team/ci/spillway/run-1/'));
    expect(gone).toHaveLength(4);
    expect(await keysNow()).toEqual(before.filter((k) => !gone.includes(k)));
    expect(await keysNow()).toContain('team/other/spillway/run-1/x.txt');
    const left = await rgw.client().send(new GetObjectCommand({ Bucket: BUCKET, Key: 'team/ci/README' }));
    expect(await left.Body!.transformToString()).toBe('not a blob');
  });
});
