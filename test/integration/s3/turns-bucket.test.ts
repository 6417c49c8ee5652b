// `spillway turns --root s3://…` (a real Ceph RGW) gives the answer `turns` gives on the local copy: a real Claude
// Code 2.1.332 session whose outputs the real hook spilled, its transcript (with a line that is not JSON and a torn
// last line) and its blobs with their records put in the bucket as the uploader lays them out.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_NAME, readManifest } from '../../../src/spill/manifest';
import { copyRealSession, hookInput, SESSION } from '../../s3/claude-session';
import { startRgw, type Rgw } from '../../s3/rgw';
import { tempDir } from '../../unit/spill/temp-dirs';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
const BUCKET = 'turns-spills';
const ROOT = `s3://${BUCKET}/team`;
let rgw: Rgw;
let home: string;
let config: string;
let sessionDir: string;
/** Local blob path -> its URL in the bucket. */
const urls = new Map<string, string>();

function cliRun(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', input, env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: config, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

beforeAll(async () => {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'pipe' });
  home = tempDir('spillway-s3turns-');
  config = path.join(home, '.claude');
  // The recorded transcript, then a line that is not JSON and a torn last line: both skipped, here and in the bucket.
  let transcriptFile: string;
  ({ transcriptFile, sessionDir } = copyRealSession(config, 'not json at all\n{"type":"user","message":{"role":"us'));
  const transcript = fs.readFileSync(transcriptFile, 'utf8');
  for (const event of ['hookstdin-1.json', 'hookstdin-2.json']) {
    const r = cliRun(['hook', 'claude-code'], {}, hookInput(event, config));
    expect(r.code, r.stderr).toBe(0);
  }
  // The hook's records name the files Claude Code persisted (it spills by reference): those travel.
  const spillDir = path.join(sessionDir, 'spillway');
  const { records } = await readManifest(spillDir);
  expect(records.length).toBeGreaterThanOrEqual(2);

  rgw = await startRgw();
  await rgw.createBucket(BUCKET);
  const c = rgw.client();
  const base = `team/claude-code/${SESSION}`;
  for (const record of records) {
    const file = path.join(spillDir, record.file);
    const body = fs.readFileSync(file);
    const key = `${base}/${sha256(body)}`;
    await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${key}.txt`, Body: body }));
    await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${key}.json`, Body: JSON.stringify({ ...record, agent: 'claude-code', lineIndex: [] }) + '\n' }));
    urls.set(file, `s3://${BUCKET}/${key}.txt`);
  }
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${base}/transcript.jsonl`, Body: transcript }));
  // The same transcript again, with a title stored beside it that is not URI-encoded (as no uploader writes it).
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${base}-titled/transcript.jsonl`, Body: transcript, Metadata: { 'spillway-title': '%E0%A4%A' } }));
  // Another session and keys of other shapes under the prefix: not this session's.
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `team/spillway/other/${'0'.repeat(64)}.txt`, Body: 'x\n' }));
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'team/README', Body: 'not a blob' }));
}, 240_000);
afterAll(async () => {
  await rgw?.stop();
});

/** The local answer with its paths and keys said as the bucket's. */
function asRemote(local: string): unknown {
  let text = local;
  for (const [file, url] of urls) text = text.split(JSON.stringify(file).slice(1, -1)).join(url);
  text = text.split(JSON.stringify(sessionDir).slice(1, -1)).join(`s3://${BUCKET}/team/claude-code/${SESSION}`);
  return JSON.parse(text);
}

describe('turns on an s3:// root (real RGW)', () => {
  it('gives the series, attribution and tokens saved that the local copy gives', () => {
    const local = cliRun(['turns', SESSION, '--json', '--no-default-roots', '--root', path.join(config, 'projects')]);
    expect(local.code, local.stderr).toBe(0);
    const remote = cliRun(['turns', SESSION, '--root', ROOT, '--json'], rgw.env);
    expect(remote.code, remote.stderr).toBe(0);
    const want = asRemote(local.stdout) as { points: Array<{ blobs: string[] }>; blobs: Array<{ key: string; tool?: string; turn?: number }>; skipped: number; tokensSaved: { tokens: number } };
    // Something to compare: calls, the spills attributed to their Bash calls and turns, the two skipped lines, a saving.
    expect(want.points.length).toBeGreaterThan(2);
    expect(want.blobs).toHaveLength(urls.size);
    for (const b of want.blobs) {
      expect(b.tool).toBe('Bash');
      expect(b.turn).toBeGreaterThan(0);
    }
    expect(want.skipped).toBe(2);
    expect(want.tokensSaved.tokens).toBeGreaterThan(0);
    expect(JSON.parse(remote.stdout)).toEqual(want);
    // The table too, and --session as another way to name it.
    const localTable = cliRun(['turns', SESSION, '--no-default-roots', '--root', path.join(config, 'projects')]);
    expect(cliRun(['turns', '--session', SESSION, '--root', ROOT], rgw.env).stdout).toBe(localTable.stdout);
  });

  it("keeps the transcript's own title over a title stored with its copy, and takes a stored title it cannot decode as none", () => {
    const local = JSON.parse(cliRun(['turns', SESSION, '--json', '--no-default-roots', '--root', path.join(config, 'projects')]).stdout) as { session: { title: string | null } };
    expect(local.session.title).toEqual(expect.any(String));
    const remote = cliRun(['turns', `${SESSION}-titled`, '--root', ROOT, '--json'], rgw.env);
    expect(remote.code, remote.stderr).toBe(0);
    expect((JSON.parse(remote.stdout) as typeof local).session.title).toBe(local.session.title);
  });

  it('says clearly when no such session is in the bucket', () => {
    const r = cliRun(['turns', 'no-such-session', '--root', ROOT], rgw.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no session 'no-such-session' under ${ROOT}/`);
  });
});
