// opencode's capture with SPILLWAY_STORE=s3://… against a real Ceph RGW: the digest names the local capture and
// the bucket's copy, the capture's record queues the copy, and the uploader puts blob and record under
// opencode/SESSION/SHA256, the same bytes.
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCapture, opencodeCaptureDefaults, startCapture } from '../../../src/adapters/opencode-capture';
import { failingBuild } from '../adapters/helpers/failing-build';
import { startRgw, type Rgw } from '../../s3/rgw';
import { uploadAll } from '../../s3/upload-all';
import { tempDir } from '../../unit/spill/temp-dirs';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
const ROOT = 's3://oc-spills/team';
let rgw: Rgw;

beforeAll(async () => {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'pipe' });
  rgw = await startRgw();
  await rgw.createBucket('oc-spills');
}, 240_000);
afterAll(async () => {
  await rgw?.stop();
});

describe("opencode's capture into s3://bucket/prefix (real RGW)", () => {
  it('names the copy in the digest and the uploader puts it in the bucket, the same bytes', async () => {
    const home = tempDir('spillway-s3oc-');
    const env = { ...rgw.env, XDG_DATA_HOME: path.join(home, 'data'), XDG_STATE_HOME: home, SPILLWAY_UPLOAD_QUEUE: path.join(home, 'uploads'), SPILLWAY_STORE: ROOT, SPILLWAY_CLI: cli };
    const opts = { ...opencodeCaptureDefaults(env), settleMs: 3000 };
    const build = failingBuild(120_000, 2, () => 0.41, 1);
    const { capture, env: shellEnv } = await startCapture(opts, 'ses_bucket', 'call_1', {});
    const res = spawnSync('bash', ['-c', build.command], { cwd: home, env: { PATH: process.env.PATH, HOME: home, ...shellEnv }, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
    const digest = await finishCapture(opts, capture, { command: build.command, exit: res.status, shown: res.stdout });
    const whole = fs.readFileSync(capture.file);
    const sha = createHash('sha256').update(whole).digest('hex');
    expect(digest).toContain(build.failureLine);
    expect(digest).toContain(capture.file);
    expect(digest).toContain(`spillway show ${ROOT}/opencode/ses_bucket/${sha}.txt --lines A:B`);
    await uploadAll(env.SPILLWAY_UPLOAD_QUEUE, () => {
      const r = spawnSync(process.execPath, [cli, 'upload'], { encoding: 'utf8', env: { ...process.env, ...env } });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    });
    const c = rgw.client();
    const blob = await c.send(new GetObjectCommand({ Bucket: 'oc-spills', Key: `team/opencode/ses_bucket/${sha}.txt` }));
    expect(Buffer.from(await blob.Body!.transformToByteArray()).equals(whole)).toBe(true);
    const record = JSON.parse(await (await c.send(new GetObjectCommand({ Bucket: 'oc-spills', Key: `team/opencode/ses_bucket/${sha}.json` }))).Body!.transformToString());
    expect(record).toMatchObject({ agent: 'opencode', tool: 'bash', toolCallId: 'call_1', args: { command: build.command }, sessionId: 'ses_bucket', bytes: whole.length });
  });
});
