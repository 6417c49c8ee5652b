// Real pi 1.6 (SDK + faux provider, Node 22) with Spillway's extension and SPILLWAY_STORE=s3://… against a real
// Ceph RGW: the blobs Spillway wrote go to the bucket with their records and the session file's copy, and
// `turns --root s3://…` then ties each to the turn `turns` gives on the folder.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentBucket } from '../../s3/agent-bucket';
import type { Rgw } from '../../s3/rgw';
import { spillwayUpload, uploadAll } from '../../s3/upload-all';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
const driver = path.join(__dirname, '..', 'adapters', 'pi-driver.mjs');
const ROOT = 's3://pi-spills/team';
let rgw: Rgw;
let tmp: string;

agentBucket('pi-spills', 'spillway-s3pi-', (r, t) => {
  rgw = r;
  tmp = t;
});

type Turns = { points: Array<{ index: number; promptTokens: number }>; blobs: Array<{ path: string; toolCallId?: string; tool?: string; turn?: number; madeBy?: string }> };

describe('pi into s3://bucket/prefix (real pi, real RGW)', () => {
  it("puts Spillway's blobs, their records and the session file in the bucket; turns there ties each blob to its turn", async () => {
    const node22 = (JSON.parse(execFileSync(process.execPath, [path.join(repo, 'scripts', 'ensure-pi.mjs')], { encoding: 'utf8' })) as { node: string }).node;
    const state = path.join(tmp, 'state');
    const env = { ...process.env, ...rgw.env, TMPDIR: tmp, XDG_STATE_HOME: state, SPILLWAY_UPLOAD_QUEUE: path.join(state, 'uploads'), SPILLWAY_STORE: ROOT, SPILLWAY_CLI: cli };
    const res = spawnSync(node22, [driver, 'eager', tmp, repo], { encoding: 'utf8', maxBuffer: 64 << 20, env });
    const report = JSON.parse(res.stdout.trim().split('\n').pop() ?? '{}') as { errors: string[]; sessions: Array<{ id: string; dir: string }> };
    expect(report.errors, res.stderr.slice(-4000)).toEqual([]);
    await uploadAll(env.SPILLWAY_UPLOAD_QUEUE, spillwayUpload(cli, env));
    const s = report.sessions[0]!;
    const home = fs.mkdtempSync(path.join(tmp, 'home-'));
    const local = spawnSync(process.execPath, [cli, 'turns', s.id, '--json'], { encoding: 'utf8', env: { ...process.env, HOME: home, TMPDIR: tmp, PI_CODING_AGENT_SESSION_DIR: path.dirname(s.dir) } });
    expect(local.status, local.stderr).toBe(0);
    const remote = spawnSync(process.execPath, [cli, 'turns', s.id, '--root', ROOT, '--json'], { encoding: 'utf8', env: { ...process.env, ...rgw.env } });
    expect(remote.status, remote.stderr).toBe(0);
    const want = JSON.parse(local.stdout) as Turns;
    const got = JSON.parse(remote.stdout) as Turns;
    // The blobs Spillway wrote (pi's own bash logs stay on the machine), each at the turn the folder gives it.
    const spilled = want.blobs.filter((b) => b.path.includes(`${s.id}-blobs`));
    expect(spilled.length).toBeGreaterThan(0);
    expect(got.blobs.map((b) => [b.toolCallId, b.tool, b.turn]).sort()).toEqual(spilled.map((b) => [b.toolCallId, b.tool, b.turn]).sort());
    expect(got.blobs.every((b) => b.path.startsWith(`${ROOT}/pi/${s.id}/`))).toBe(true);
    // The session file's copy is the one queued at the run's end: every turn, the closing answer's included, as the
    // folder counts them (their blobs named by URL, and without pi's own logs).
    const turn = (p: Turns['points'][number]) => ({ ...p, blobs: undefined, parts: undefined });
    expect(want.points.length).toBeGreaterThan(Math.max(...spilled.map((b) => b.turn ?? 0)));
    expect(got.points.map(turn)).toEqual(want.points.map(turn));
  });
});
