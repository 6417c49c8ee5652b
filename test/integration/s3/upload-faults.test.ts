// Faults against a real RGW: 503s (through a proxy on 127.0.0.1), bad credentials, a bucket that does not exist,
// the uploader killed with -9 mid-multipart, the endpoint gone mid-upload.
// The spill's result prints at once each time; `spillway upload` says what failed and keeps the copy queued;
// a later run uploads it, once.
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueTranscript } from '../../../src/spill/remote/upload-queue';
import { startProxy, type Proxy } from '../../s3/proxy';
import { startRgw, type Rgw } from '../../s3/rgw';
import { tempDir } from '../../unit/spill/temp-dirs';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
let rgw: Rgw;
let proxy: Proxy;

beforeAll(async () => {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'pipe' });
  rgw = await startRgw();
  await rgw.createBucket('fault-spills');
  proxy = await startProxy(rgw.endpoint);
});
afterAll(async () => {
  await proxy?.close();
  await rgw?.stop();
});

function cliRun(args: string[], env: NodeJS.ProcessEnv, input = '', started?: (child: ChildProcess) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env } });
    started?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const text = (seed: string) => Array.from({ length: 4000 }, (_, i) => `${seed} line ${i}`).join('\n') + '\n';
const sha = (t: string) => createHash('sha256').update(t).digest('hex');

/** A spill made while `broken` describes the store, then `spillway upload` with it broken and again with it fixed. */
async function faultThenRecover(name: string, broken: NodeJS.ProcessEnv, store: string, expectedError: RegExp, setUp = (): void => undefined, fix = (): void => undefined) {
  const home = tempDir('spillway-s3fault-');
  const good = { ...rgw.env, XDG_STATE_HOME: home, SPILLWAY_UPLOAD_QUEUE: path.join(home, 'uploads') };
  const bad = { ...good, ...broken };
  const body = text(name);
  setUp();
  // The spill's own uploader runs with the broken settings too; its failure leaves the queue as it was.
  const r = await cliRun(['spill', '--session', name, '--tool', 'Bash', '--store', store], bad, body);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('Full text:');
  let failed = await cliRun(['upload'], bad);
  while (/another upload is running/.test(failed.stdout)) failed = await cliRun(['upload'], bad);
  expect(failed.code).toBe(1);
  expect(failed.stderr).toMatch(expectedError);
  expect(failed.stderr).toContain('kept in the queue');
  expect(readdirSync(good.SPILLWAY_UPLOAD_QUEUE).filter((n) => n.endsWith('.pending.json'))).toHaveLength(1);
  fix();
  let ok = await cliRun(['upload'], good);
  // The spill's detached uploader may still hold the queue: then this run waits its turn.
  while (/another upload is running/.test(ok.stdout)) ok = await cliRun(['upload'], good);
  expect(ok.code).toBe(0);
  const key = `${store.replace('s3://fault-spills/', '')}/spillway/${name}/${sha(body)}.txt`;
  expect((await rgw.client().send(new HeadObjectCommand({ Bucket: 'fault-spills', Key: key }))).ContentLength).toBe(Buffer.byteLength(body));
  expect((await cliRun(['upload'], good)).stdout).toBe('uploaded 0, already there 0, local blob gone 0, still queued 0\n');
}

describe('upload faults (real RGW)', () => {
  it('503 on every request: said so, kept; a later run uploads it once', async () => {
    await faultThenRecover('s503', { AWS_ENDPOINT_URL: proxy.endpoint }, 's3://fault-spills/p503', /server failed \(HTTP 503\)/, () => (proxy.fail503 = 1_000_000), () => (proxy.fail503 = 0));
  });

  it('a few 503s are retried within one run', async () => {
    const home = tempDir('spillway-s3fault-');
    const env = { ...rgw.env, AWS_ENDPOINT_URL: proxy.endpoint, XDG_STATE_HOME: home, SPILLWAY_UPLOAD_QUEUE: path.join(home, 'uploads'), SPILLWAY_STORE: 's3://fault-spills/retry' };
    proxy.fail503 = 0;
    await cliRun(['spill', '--session', 'retry', '--tool', 'Bash'], { ...env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' }, text('retry'));
    // The spill's own uploader (endpoint down, not through the proxy) may still hold the queue: this run waits its turn.
    proxy.fail503 = 2;
    let r = await cliRun(['upload'], env);
    while (/another upload is running/.test(r.stdout)) r = await cliRun(['upload'], env);
    expect(r).toMatchObject({ code: 0, stdout: 'uploaded 1, already there 0, local blob gone 0, still queued 0\n' });
    expect(proxy.fail503).toBe(0);
  });

  it('bad credentials: said so, kept, uploaded once with the right ones', async () => {
    await faultThenRecover('creds', { AWS_SECRET_ACCESS_KEY: 'wrong-secret' }, 's3://fault-spills/creds', /credentials were refused/);
  });

  it('a bucket that does not exist: said so, kept; uploaded once it exists', async () => {
    const home = tempDir('spillway-s3fault-');
    const env = { ...rgw.env, XDG_STATE_HOME: home, SPILLWAY_UPLOAD_QUEUE: path.join(home, 'uploads'), SPILLWAY_STORE: 's3://fault-spills-later/x' };
    const body = text('nobucket');
    expect((await cliRun(['spill', '--session', 'nb', '--tool', 'Bash'], env, body)).code).toBe(0);
    let failed = await cliRun(['upload'], env);
    while (/another upload is running/.test(failed.stdout)) failed = await cliRun(['upload'], env);
    expect(failed.stderr).toMatch(/bucket does not exist/);
    await rgw.createBucket('fault-spills-later');
    // This run or the spill's own uploader (which may start late, with the same settings) copies it.
    let ok = await cliRun(['upload'], env);
    while (/another upload is running/.test(ok.stdout)) ok = await cliRun(['upload'], env);
    expect(ok.code).toBe(0);
    expect(readdirSync(env.SPILLWAY_UPLOAD_QUEUE).filter((n) => n.endsWith('.pending.json'))).toEqual([]);
    const head = await rgw.client().send(new HeadObjectCommand({ Bucket: 'fault-spills-later', Key: `x/spillway/nb/${sha(body)}.txt` }));
    expect(head.ContentLength).toBe(Buffer.byteLength(body));
  });

  it('a run killed after its copy went up, before its entry went: the next run writes nothing over the copy there', async () => {
    const home = tempDir('spillway-s3fault-');
    const env = { ...rgw.env, XDG_STATE_HOME: home, SPILLWAY_UPLOAD_QUEUE: path.join(home, 'uploads'), SPILLWAY_STORE: 's3://fault-spills/after' };
    const dead = { ...env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' };
    const body = text('after');
    expect((await cliRun(['spill', '--session', 'after', '--tool', 'Bash'], dead, body)).code).toBe(0);
    let r = await cliRun(['upload'], dead);
    while (/another upload is running/.test(r.stdout)) r = await cliRun(['upload'], dead);
    // The copy the killed run sent (marked, to tell it from a second write).
    const key = `after/spillway/after/${sha(body)}.txt`;
    await rgw.client().send(new PutObjectCommand({ Bucket: 'fault-spills', Key: key, Body: 'the first copy' }));
    let ok = await cliRun(['upload'], env);
    while (/another upload is running/.test(ok.stdout)) ok = await cliRun(['upload'], env);
    expect(ok).toMatchObject({ code: 0, stdout: 'uploaded 0, already there 1, local blob gone 0, still queued 0\n' });
    const got = await rgw.client().send(new GetObjectCommand({ Bucket: 'fault-spills', Key: key }));
    expect(await got.Body!.transformToString()).toBe('the first copy');
  });

  it("a transcript that grows while its copy goes up is sent again in the same run (the agent's own re-queue found the entry there)", async () => {
    const home = tempDir('spillway-s3fault-');
    const queue = path.join(home, 'uploads');
    const env = { ...rgw.env, AWS_ENDPOINT_URL: proxy.endpoint, XDG_STATE_HOME: home, SPILLWAY_UPLOAD_QUEUE: queue };
    const transcript = path.join(home, 'session.jsonl');
    writeFileSync(transcript, '{"turn":1}\n');
    await enqueueTranscript(queue, { store: 's3://fault-spills/grows', file: transcript, agent: 'pi', sessionId: 'grows' });
    // The agent writes its closing answer while the first copy is on its way; its queueing finds the entry there.
    let grown = false;
    let heads = 0;
    proxy.onRequest = (method, reqPath) => {
      if (method === 'HEAD' && reqPath.endsWith('/grows/pi/grows/transcript.jsonl')) heads++;
      if (method !== 'PUT' || !reqPath.endsWith('/grows/pi/grows/transcript.jsonl') || grown) return;
      grown = true;
      appendFileSync(transcript, '{"turn":2,"answer":"done"}\n');
    };
    try {
      let r = await cliRun(['upload'], env);
      while (/another upload is running/.test(r.stdout)) r = await cliRun(['upload'], env);
      expect(r).toMatchObject({ code: 0, stdout: 'uploaded 2, already there 0, local blob gone 0, still queued 0\n' });
    } finally {
      proxy.onRequest = undefined;
    }
    expect(grown).toBe(true);
    // One size check a copy (is it there already?): whether the file grew past its copy is known without asking again.
    expect(heads).toBe(2);
    const got = await rgw.client().send(new GetObjectCommand({ Bucket: 'fault-spills', Key: 'grows/pi/grows/transcript.jsonl' }));
    expect(await got.Body!.transformToString()).toBe(readFileSync(transcript, 'utf8'));
  });

  describe('mid-multipart (a 30 MB blob: four parts)', () => {
    const big = Array.from({ length: 600_000 }, (_, i) => `build step ${i} ${'x'.repeat(i % 60)}`).join('\n') + '\n';

    /** A spill whose own uploader cannot reach the bucket (it fails, the entry stays): the queue for the fault. */
    async function queuedBigSpill(name: string) {
      const home = tempDir('spillway-s3fault-');
      const env = { ...rgw.env, AWS_ENDPOINT_URL: proxy.endpoint, XDG_STATE_HOME: home, SPILLWAY_UPLOAD_QUEUE: path.join(home, 'uploads'), SPILLWAY_STORE: `s3://fault-spills/${name}` };
      const dead = { ...env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' };
      expect((await cliRun(['spill', '--session', name, '--tool', 'Bash'], dead, big)).stdout).toContain('Full text:');
      let r = await cliRun(['upload'], dead);
      while (/another upload is running/.test(r.stdout)) r = await cliRun(['upload'], dead);
      expect(r.code).toBe(1);
      return { env, key: `${name}/spillway/${name}/${sha(big)}.txt` };
    }

    /** The copy in the bucket is the blob, whole, and no part of an unfinished upload of it is left. */
    async function wholeOnce(key: string, env: NodeJS.ProcessEnv) {
      const got = await rgw.client().send(new GetObjectCommand({ Bucket: 'fault-spills', Key: key }));
      expect(sha(await got.Body!.transformToString())).toBe(sha(big));
      const left = await rgw.client().send(new ListMultipartUploadsCommand({ Bucket: 'fault-spills', Prefix: key }));
      expect(left.Uploads ?? []).toEqual([]);
      expect(readdirSync(env.SPILLWAY_UPLOAD_QUEUE!).filter((n) => n.endsWith('.pending.json'))).toEqual([]);
      expect((await cliRun(['upload'], env)).stdout).toBe('uploaded 0, already there 0, local blob gone 0, still queued 0\n');
    }

    it('the uploader killed with -9 after its second part: the entry stays, the next run takes over its lock and uploads the blob once', async () => {
      const { env, key } = await queuedBigSpill('killed');
      let killed = false;
      for (let tries = 0; !killed && tries < 20; tries++) {
        let child: ChildProcess | undefined;
        proxy.onRequest = (method, _path, query) => {
          if (method === 'PUT' && /(^|&)partNumber=2(&|$)/.test(query) && child && !killed) {
            killed = child.kill('SIGKILL');
          }
        };
        await cliRun(['upload'], env, '', (c) => (child = c));
      }
      proxy.onRequest = undefined;
      expect(killed).toBe(true);
      // The killed run's lock and entry are still there; its lock names a process that is gone.
      const queue = readdirSync(env.SPILLWAY_UPLOAD_QUEUE);
      expect(queue.filter((n) => n.endsWith('.pending.json'))).toHaveLength(1);
      expect(queue).toContain('uploader.lock');
      expect(readFileSync(path.join(env.SPILLWAY_UPLOAD_QUEUE, 'uploader.lock'), 'utf8')).toMatch(/^\d+ \d*\n$/);
      const ok = await cliRun(['upload'], env);
      expect(ok).toMatchObject({ code: 0, stdout: 'uploaded 1, already there 0, local blob gone 0, still queued 0\n' });
      await wholeOnce(key, env);
    });

    it('the endpoint gone mid-upload: said so, kept; once it is back the next run uploads the blob once', async () => {
      const { env, key } = await queuedBigSpill('gone');
      proxy.onRequest = (method, _path, query) => {
        if (method === 'PUT' && /(^|&)partNumber=2(&|$)/.test(query)) {
          proxy.down = true;
          proxy.cutNow();
        }
      };
      let failed = await cliRun(['upload'], env);
      while (/another upload is running/.test(failed.stdout)) failed = await cliRun(['upload'], env);
      proxy.onRequest = undefined;
      proxy.down = false;
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('1 kept in the queue');
      const ok = await cliRun(['upload'], env);
      expect(ok).toMatchObject({ code: 0, stdout: 'uploaded 1, already there 0, local blob gone 0, still queued 0\n' });
      await wholeOnce(key, env);
    });
  });
});
