// The real Codex CLI (offline, against the mock Responses API) with Spillway's hook and SPILLWAY_STORE=s3://…
// against a real Ceph RGW: the captures go to the bucket with their records, the hook sends the session's rollout
// along (again at the turn's end, Stop), and `turns` and `list` on the bucket then give the answers they give on the
// local copy, every call of it up to the closing answer.
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexBin, execScript, runCodex } from '../adapters/helpers/codex';
import { failingBuild } from '../adapters/helpers/failing-build';
import { startMockResponses } from '../adapters/helpers/mock-responses';
import { agentBucket } from '../../s3/agent-bucket';
import type { Rgw } from '../../s3/rgw';
import { expectSameAnswers } from '../../s3/same-answers';
import { spillwayUpload, uploadAll } from '../../s3/upload-all';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
const BUCKET = 'codex-spills';
const ROOT = `s3://${BUCKET}/team`;
let rgw: Rgw;
let tmp: string;

agentBucket(BUCKET, 'spillway-s3codex-', (r, t) => {
  rgw = r;
  tmp = t;
}, { file: codexBin(), install: 'node scripts/setup.mjs codex installs it' });

describe('Codex into s3://bucket/prefix (real Codex, real RGW)', () => {
  it("sends the rollout with the captures; turns and list on the bucket answer as on the folder", async () => {
    const home = path.join(tmp, 'codex-home');
    const work = path.join(tmp, 'work');
    fs.mkdirSync(home, { recursive: true });
    fs.mkdirSync(work, { recursive: true });
    const noHome = path.join(tmp, 'no-home');
    const install = spawnSync(process.execPath, [cli, 'hook', 'install', 'codex', '--user', '--trust'], { encoding: 'utf8', env: { ...process.env, CODEX_HOME: home, HOME: noHome } });
    expect(install.status, install.stderr).toBe(0);
    const queue = path.join(tmp, 'uploads');
    const bucketEnv = { ...rgw.env, SPILLWAY_STORE: ROOT, SPILLWAY_UPLOAD_QUEUE: queue, SPILLWAY_CLI: cli };
    // Two failing builds spilled, then a small command: its hooks queue the rollout again once the second build's turn is in it.
    const commands = [failingBuild(300_000, 2, () => 0.37, 0).command, failingBuild(120_000, 1, () => 0.61, 1).command, 'echo ok'];
    const upload = spillwayUpload(cli, bucketEnv);
    const script = execScript(commands);
    // The closing answer comes once the copies queued so far are up, as when the model takes longer than the
    // uploader: only a hook after that answer (Stop) can send the rollout that holds it.
    const mock = await startMockResponses(async (req) => {
      const reply = script(req);
      if (reply.kind === 'text') await uploadAll(queue, upload);
      return reply;
    });
    const run = await runCodex({ codexHome: home, cwd: work, baseUrl: mock.url, env: { HOME: noHome, ...bucketEnv } });
    await mock.close();
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    await uploadAll(queue, upload);
    const [sessionId, ...others] = fs.readdirSync(path.join(home, 'spillway'));
    expect(others).toEqual([]);
    const copy = await rgw.client().send(new GetObjectCommand({ Bucket: BUCKET, Key: `team/codex/${sessionId}/transcript.jsonl` }));
    expect(await copy.Body!.transformToString()).toContain(`"id":"${sessionId}"`);
    const localEnv = { CODEX_HOME: home, HOME: noHome };
    const { local, remote } = expectSameAnswers({ root: ROOT, agent: 'codex', sessionId: sessionId!, localEnv, remoteEnv: rgw.env });
    expect(local.blobs.map((b) => b.tool)).toEqual(['Bash', 'Bash']);
    expect(new Set(local.blobs.map((b) => b.turn)).size).toBe(2);
    expect(remote.session).toMatchObject({ id: sessionId });
    // The Stop hook sent the rollout once the turn had ended: the bucket's copy has the closing answer's call too.
    expect(remote.points).toHaveLength(local.points.length);
  }, 600_000);
});
