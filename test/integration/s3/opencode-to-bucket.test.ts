// opencode's capture with SPILLWAY_STORE=s3://… against a real Ceph RGW: the digest names the local capture and
// the bucket's copy, the capture's record queues the copy, and the uploader puts blob and record under
// opencode/SESSION/SHA256, the same bytes. The real opencode (offline, against a chat-completions mock) with the
// plugin sends the plugin's record of the session's API calls along, and `turns` and `list` on the bucket then
// give the answers they give on the local copy.
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCapture, opencodeCaptureDefaults, startCapture } from '../../../src/adapters/opencode-capture';
import { failingBuild } from '../adapters/helpers/failing-build';
import { startMockOpenAI } from '../adapters/helpers/mock-openai';
import { makeOpencodeHome, runOpencode } from '../adapters/helpers/opencode-run';
import { startRgw, type Rgw } from '../../s3/rgw';
import { expectSameAnswers } from '../../s3/same-answers';
import { queueEmptied, spillwayUpload, uploadAll } from '../../s3/upload-all';
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
    await uploadAll(env.SPILLWAY_UPLOAD_QUEUE, spillwayUpload(cli, env));
    const c = rgw.client();
    const blob = await c.send(new GetObjectCommand({ Bucket: 'oc-spills', Key: `team/opencode/ses_bucket/${sha}.txt` }));
    expect(Buffer.from(await blob.Body!.transformToByteArray()).equals(whole)).toBe(true);
    const record = JSON.parse(await (await c.send(new GetObjectCommand({ Bucket: 'oc-spills', Key: `team/opencode/ses_bucket/${sha}.json` }))).Body!.transformToString());
    expect(record).toMatchObject({ agent: 'opencode', tool: 'bash', toolCallId: 'call_1', args: { command: build.command }, sessionId: 'ses_bucket', bytes: whole.length });
  });

  it('real opencode: the calls record travels too, and turns and list on the bucket answer as on the folder', async () => {
    const builds = [failingBuild(300_000, 2, () => 0.37, 0), failingBuild(120_000, 1, () => 0.61, 1)];
    const h = await makeOpencodeHome();
    try {
      const queue = path.join(h.root, 'uploads');
      const mock = await startMockOpenAI(async (req) => {
        // opencode's title request has no tools: answer it with text.
        if (!Array.isArray(req.tools)) return { kind: 'text', text: 'title' };
        const done = req.messages.filter((m) => m.role === 'tool').length;
        const build = builds[done];
        if (build) return { kind: 'tool_call', name: 'bash', args: { command: build.command, description: 'build' } };
        // The closing answer once the copies queued so far are up, as a slow last call would: the record's copy
        // then lacks this call unless it is queued again.
        await queueEmptied(queue);
        return { kind: 'text', text: 'done' };
      });
      h.writeConfig(mock.baseURL, { permission: { bash: { '*': 'allow' } } });
      const install = spawnSync(process.execPath, [cli, 'hook', 'install', 'opencode', '--user'], { encoding: 'utf8', env: { ...process.env, ...h.env } });
      expect(install.status, install.stderr).toBe(0);
      const bucketEnv = { ...rgw.env, SPILLWAY_STORE: ROOT, SPILLWAY_UPLOAD_QUEUE: queue, SPILLWAY_CLI: cli };
      const run = await runOpencode(h, 'build it', bucketEnv);
      await mock.close();
      expect(run.code, run.stderr).toBe(0);
      await uploadAll(queue, spillwayUpload(cli, { ...h.env, ...bucketEnv }));
      const root = path.join(h.dataDir, 'opencode', 'spillway');
      const sessionId = fs.readdirSync(root).find((n) => n.startsWith('ses_'))!;
      const calls = fs.readFileSync(path.join(root, sessionId, '.spillway-calls.jsonl'));
      const copy = Buffer.from(await (await rgw.client().send(new GetObjectCommand({ Bucket: 'oc-spills', Key: `team/opencode/${sessionId}/transcript.jsonl` }))).Body!.transformToByteArray());
      // The whole record, its last call's line included: it is queued again once the session is idle.
      expect(copy.equals(calls)).toBe(true);
      const { local } = expectSameAnswers({ root: ROOT, agent: 'opencode', sessionId, localEnv: h.env, remoteEnv: rgw.env, everyCall: true });
      expect(local.blobs.map((b) => b.turn)).toEqual([1, 2]);
    } finally {
      fs.rmSync(h.root, { recursive: true, force: true });
    }
  }, 600_000);
});
