// The real Claude Code CLI (offline, against the mock Messages API) with Spillway installed by
// `spillway hook install claude-code` and SPILLWAY_STORE=s3://… against a real Ceph RGW: the Bash outputs spilled by
// the shell prefix go to the bucket, the Stop hook sends the transcript at the turn's end, and `turns` on the bucket
// then gives every call `turns` gives on the local copy, the closing answer's too.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashScript, CLAUDE_BIN_RELATIVE, claudeDirs, offlineClaudeEnv, runClaude, startMockAnthropic } from '../adapters/helpers/mock-anthropic';
import { failingBuild } from '../adapters/helpers/failing-build';
import { agentBucket } from '../../s3/agent-bucket';
import type { Rgw } from '../../s3/rgw';
import { expectSameAnswers } from '../../s3/same-answers';
import { spillwayUpload, uploadAll } from '../../s3/upload-all';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
const claudeBin = path.join(repo, ...CLAUDE_BIN_RELATIVE);
const BUCKET = 'claude-spills';
const ROOT = `s3://${BUCKET}/team`;
let rgw: Rgw;
let tmp: string;

agentBucket(BUCKET, 'spillway-s3claude-', (r, t) => {
  rgw = r;
  tmp = t;
}, { file: claudeBin, install: 'npm ci installs it' });

describe('Claude Code into s3://bucket/prefix (real Claude Code, real RGW)', () => {
  it('sends the transcript at the turn end; turns on the bucket answers as on the folder, every call', async () => {
    const { configDir, workDir } = claudeDirs(tmp);
    const install = spawnSync(process.execPath, [cli, 'hook', 'install', 'claude-code', '--user'], { encoding: 'utf8', env: { ...process.env, CLAUDE_CONFIG_DIR: configDir } });
    expect(install.status, install.stderr).toBe(0);
    expect(install.stdout).toContain('added Stop hook (no matcher)');
    const queue = path.join(tmp, 'uploads');
    const bucketEnv = { ...rgw.env, SPILLWAY_STORE: ROOT, SPILLWAY_UPLOAD_QUEUE: queue, SPILLWAY_CLI: cli, XDG_STATE_HOME: path.join(tmp, 'state') };
    const upload = spillwayUpload(cli, bucketEnv);
    // Two failing builds, each spilled by the shell prefix, then the closing answer.
    const script = bashScript([failingBuild(120_000, 2, () => 0.37, 0).command, failingBuild(80_000, 1, () => 0.61, 1).command], 'Both builds failed.');
    // The closing answer comes once the copies queued so far are up, as when the model takes longer than the
    // uploader: only a hook after that answer (Stop) can send the transcript that holds it.
    const mock = await startMockAnthropic(async (req) => {
      const reply = script(req);
      if (reply.kind === 'text' && reply.text !== 'ok') await uploadAll(queue, upload);
      return reply;
    });
    const run = await runClaude({ bin: claudeBin, prompt: 'Run both builds', cwd: workDir, env: { ...offlineClaudeEnv({ home: tmp, configDir, baseUrl: mock.url }), ...bucketEnv } });
    await mock.close();
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    // The Stop hook printed nothing: the turn ended with the mock's closing answer, no request after it.
    expect(run.stdout).toContain('Both builds failed.');
    await uploadAll(queue, upload);
    const projects = path.join(configDir, 'projects');
    const [enc] = fs.readdirSync(projects);
    const [transcript] = fs.readdirSync(path.join(projects, enc!)).filter((f) => f.endsWith('.jsonl'));
    const sessionId = path.basename(transcript!, '.jsonl');
    const { local, remote } = expectSameAnswers({ root: ROOT, agent: 'claude-code', sessionId, localEnv: { HOME: tmp, CLAUDE_CONFIG_DIR: configDir }, remoteEnv: rgw.env });
    expect(local.blobs.map((b) => b.tool)).toEqual(['Bash', 'Bash']);
    // Every call, the closing answer's included: the transcript went up again after it.
    expect(remote.points).toHaveLength(local.points.length);
    expect(local.points.length).toBe(3);
  }, 600_000);
});
