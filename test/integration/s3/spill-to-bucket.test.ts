// `spillway spill --store s3://…` against a real Ceph RGW: the local blob and digest at once, a durable copy
// in the bucket by the detached uploader, each blob uploaded once, and the queue kept through an outage.
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../s3/proxy';
import { startRgw, type Rgw } from '../../s3/rgw';
import { tempDir } from '../../unit/spill/temp-dirs';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
let rgw: Rgw;

beforeAll(async () => {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'pipe' });
  rgw = await startRgw();
  await rgw.createBucket('team-spills');
});
afterAll(async () => {
  await rgw?.stop();
});

const output = (seed: string, lines = 3000) => Array.from({ length: lines }, (_, i) => (i === 1500 ? `FAIL ${seed} at line ${i}` : `ok ${seed} ${i}`)).join('\n') + '\n';
const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

function cliRun(args: string[], env: NodeJS.ProcessEnv, input = '') {
  const r = spawnSync(process.execPath, [cli, ...args], { input, encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh local state: its own spill root and upload queue. */
function state(extra: NodeJS.ProcessEnv = {}) {
  const home = tempDir('spillway-s3-');
  return { XDG_STATE_HOME: home, SPILLWAY_UPLOAD_QUEUE: path.join(home, 'uploads'), ...rgw.env, ...extra };
}

const queued = (env: NodeJS.ProcessEnv) => readdirSync(env.SPILLWAY_UPLOAD_QUEUE!).filter((n) => n.endsWith('.pending.json'));

async function waitFor(what: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await what())) await new Promise((r) => setTimeout(r, 100));
}

async function body(key: string): Promise<string> {
  const got = await rgw.client().send(new GetObjectCommand({ Bucket: 'team-spills', Key: key }));
  return got.Body!.transformToString();
}

describe('spill into s3://bucket/prefix (real RGW)', () => {
  it('prints the digest at once naming the local file and the remote copy; the uploader puts blob and record under agent/session/sha256', async () => {
    const env = state();
    const text = output('one');
    const r = cliRun(['spill', '--session', 'run-412', '--tool', 'Bash', '--args', 'npm test', '--store', 's3://team-spills/ci/main'], env, text);
    expect(r.code).toBe(0);
    const file = /Full text: (\S+) —/.exec(r.stdout)?.[1];
    expect(readFileSync(file!, 'utf8')).toBe(text);
    const key = `ci/main/spillway/run-412/${sha(text)}.txt`;
    expect(r.stdout).toContain(`spillway show s3://team-spills/${key} --lines A:B`);
    // The pending record is private, and the detached uploader empties the queue once the copy is there.
    await waitFor(() => queued(env).length === 0);
    expect(await body(key)).toBe(text);
    const record = JSON.parse(await body(key.replace(/\.txt$/, '.json')));
    expect(record).toMatchObject({ agent: 'spillway', sessionId: 'run-412', tool: 'Bash', args: 'npm test', bytes: Buffer.byteLength(text), sha256: sha(text), file: path.basename(file!) });
  });

  it('SPILLWAY_STORE chooses the bucket as --store does; a second identical spill is not uploaded again', async () => {
    const env = state({ SPILLWAY_STORE: 's3://team-spills/env' });
    const text = output('two');
    for (const call of ['a', 'b']) expect(cliRun(['spill', '--session', 's2', '--tool', 'Bash', '--call-id', call], env, text).code).toBe(0);
    await waitFor(() => queued(env).length === 0);
    const listed = await rgw.client().send(new ListObjectsV2Command({ Bucket: 'team-spills', Prefix: 'env/' }));
    expect(listed.Contents?.map((o) => o.Key).sort()).toEqual([`env/spillway/s2/${sha(text)}.json`, `env/spillway/s2/${sha(text)}.txt`]);
  });

  it('an endpoint that is down: the result prints at once, the copy stays queued (0600), and the next run uploads it exactly once', async () => {
    const env = state({ SPILLWAY_STORE: 's3://team-spills/outage' });
    const down = { ...env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' };
    const text = output('three', 200_000); // ~2.6 MB: several parts would not fit one put
    const r = cliRun(['spill', '--session', 's3', '--tool', 'Bash'], down, text);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('FAIL three');
    // The spill's own uploader (endpoint down as well) may hold the queue a moment: each run here waits its turn.
    let failed = cliRun(['upload'], down);
    while (/another upload is running/.test(failed.stdout)) failed = cliRun(['upload'], down);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/nothing answers at the endpoint|ECONNREFUSED/);
    expect(failed.stderr).toContain('1 kept in the queue');
    const [entry] = queued(env);
    expect(statSync(path.join(env.SPILLWAY_UPLOAD_QUEUE, entry!)).mode & 0o777).toBe(0o600);
    expect(statSync(env.SPILLWAY_UPLOAD_QUEUE).mode & 0o777).toBe(0o700);

    let ok = cliRun(['upload'], env);
    while (/another upload is running/.test(ok.stdout)) ok = cliRun(['upload'], env);
    expect(ok).toMatchObject({ code: 0, stdout: 'uploaded 1, already there 0, local blob gone 0, still queued 0\n' });
    const key = `outage/spillway/s3/${sha(text)}.txt`;
    expect((await rgw.client().send(new HeadObjectCommand({ Bucket: 'team-spills', Key: key }))).ContentLength).toBe(Buffer.byteLength(text));
    expect(cliRun(['upload'], env).stdout).toBe('uploaded 0, already there 0, local blob gone 0, still queued 0\n');
  });

  it('twelve spills at once: their detached uploaders leave nothing queued, and each copy goes up once', async () => {
    const proxy = await startProxy(rgw.endpoint);
    try {
      const env = state({ SPILLWAY_STORE: 's3://team-spills/many', AWS_ENDPOINT_URL: proxy.endpoint });
      // Six contents, each spilled twice: twelve queue entries, six objects.
      const texts = Array.from({ length: 12 }, (_, i) => output(`many-${i % 6}`));
      await Promise.all(
        texts.map(
          (text, i) =>
            new Promise<void>((resolve, reject) => {
              const child = execFile(process.execPath, [cli, 'spill', '--session', 'many', '--tool', 'Bash', '--call-id', `c${i}`], { env: { ...process.env, ...env } }, (err) => (err ? reject(err) : resolve()));
              child.stdin!.end(text);
            }),
        ),
      );
      // No `spillway upload` here: the uploaders the spills started must take every entry between them.
      await waitFor(() => queued(env).length === 0);
      const want = [...new Set(texts)].map((t) => `/team-spills/many/spillway/many/${sha(t)}.txt`).sort();
      expect(proxy.puts.filter((p) => p.endsWith('.txt')).sort()).toEqual(want);
      for (const t of new Set(texts)) expect(await body(`many/spillway/many/${sha(t)}.txt`)).toBe(t);
    } finally {
      await proxy.close();
    }
  });
});
