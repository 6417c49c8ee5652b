// The real Gemini CLI (offline, against the mock Gemini API) with Spillway's AfterTool and AfterAgent hooks and
// SPILLWAY_STORE=s3://… against a real Ceph RGW: the hook's blobs go to the bucket with their records, the hooks send
// the session file along (the closing answer's included), and `turns` and `list` on the bucket then give the answers
// they give on the local copy, every call, each blob tied to the call whose digest named it.
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { failingBuild } from '../adapters/helpers/failing-build';
import { geminiDirs, offlineGeminiEnv, runGemini, shellScript, startMockGemini } from '../adapters/helpers/mock-gemini';
import { MANIFEST_NAME, readManifest } from '../../../src/spill/manifest';
import { agentBucket } from '../../s3/agent-bucket';
import type { Rgw } from '../../s3/rgw';
import { expectSameAnswers } from '../../s3/same-answers';
import { queueEmptied, spillwayUpload, uploadAll } from '../../s3/upload-all';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
const geminiScript = path.join(repo, '.cache', 'gemini-cli', 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
const BUCKET = 'gemini-spills';
const ROOT = `s3://${BUCKET}/team`;
let rgw: Rgw;
let tmp: string;

agentBucket(BUCKET, 'spillway-s3gemini-', (r, t) => {
  rgw = r;
  tmp = t;
}, { file: geminiScript, install: 'node scripts/setup.mjs gemini-cli' });

describe('Gemini CLI into s3://bucket/prefix (real Gemini CLI, real RGW)', () => {
  it('sends the session file with the blobs; turns and list on the bucket answer as on the folder', async () => {
    const { home, workDir } = geminiDirs(tmp);
    const install = spawnSync(process.execPath, [cli, 'hook', 'install', 'gemini-cli', '--user'], { encoding: 'utf8', env: { ...process.env, HOME: home } });
    expect(install.status, install.stderr).toBe(0);
    const queue = path.join(tmp, 'uploads');
    const bucketEnv = { ...rgw.env, SPILLWAY_STORE: ROOT, SPILLWAY_UPLOAD_QUEUE: queue, SPILLWAY_CLI: cli };
    // Two failing builds spilled, then a small command: its hook queues the session file again once the second
    // build's digest is in it (a digest enters the file only after its hook answered).
    const commands = [failingBuild(300_000, 2, () => 0.37, 0).command, failingBuild(120_000, 1, () => 0.61, 1).command, 'echo ok'];
    const script = shellScript(commands, 'done');
    // The closing answer once the copies queued so far are up, as a slow last call would: the session file's copy
    // then lacks it unless the file is queued again at the turn's end.
    const mock = await startMockGemini(async (req) => {
      const reply = script(req);
      if (reply.kind === 'text' && reply.text === 'done') await queueEmptied(queue);
      return reply;
    });
    const run = await runGemini({ script: geminiScript, prompt: 'Build it', cwd: workDir, env: { ...offlineGeminiEnv({ home, baseUrl: mock.url }), ...bucketEnv } });
    await mock.close();
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    await uploadAll(queue, spillwayUpload(cli, bucketEnv));
    const outputs = path.join(home, '.gemini', 'tmp', path.basename(workDir), 'tool-outputs');
    const [sessionFolder, ...others] = fs.readdirSync(outputs);
    expect(others).toEqual([]);
    const sessionId = sessionFolder!.replace(/^session-/, '');
    const { records } = await readManifest(path.join(outputs, sessionFolder!));
    expect(fs.existsSync(path.join(outputs, sessionFolder!, MANIFEST_NAME))).toBe(true);
    const spilled = new Set(records.map((r) => path.join(outputs, sessionFolder!, r.file)));
    expect(spilled.size).toBe(2);
    const copy = await rgw.client().send(new GetObjectCommand({ Bucket: BUCKET, Key: `team/gemini-cli/${sessionId}/transcript.jsonl` }));
    expect(await copy.Body!.transformToString()).toContain(sessionId);
    const { local } = expectSameAnswers({ root: ROOT, agent: 'gemini-cli', sessionId, localEnv: { HOME: home }, remoteEnv: rgw.env, travels: (b) => spilled.has(b.path), everyCall: true });
    // Each blob is tied to Gemini's own call (the one whose digest named it), not to the hook's record.
    const byRecord = new Set(records.map((r) => r.toolCallId));
    for (const b of local.blobs.filter((b) => spilled.has(b.path))) expect(byRecord.has(b.toolCallId!), b.toolCallId).toBe(false);
  }, 600_000);

  it('through the full CLI too (`spillway hook gemini-cli`): the hook starts the uploader, and the copy goes up with no `spillway upload`', async () => {
    const projectTemp = path.join(tmp, 'cli-home', '.gemini', 'tmp', 'proj');
    fs.mkdirSync(path.join(projectTemp, 'chats'), { recursive: true });
    const sessionId = '0a1b2c3d-aaaa-bbbb-cccc-000000000002';
    const transcript = path.join(projectTemp, 'chats', 'session-2026-01-01T00-00-0a1b2c3d.jsonl');
    fs.writeFileSync(transcript, `${JSON.stringify({ sessionId })}\n`);
    const output = Array.from({ length: 3000 }, (_, i) => (i === 1500 ? 'error: the failure line' : `step ${i + 1} compiled fine`)).join('\n');
    const event = {
      session_id: sessionId,
      transcript_path: transcript,
      cwd: tmp,
      hook_event_name: 'AfterTool',
      tool_name: 'run_shell_command',
      tool_input: { command: 'make all' },
      tool_response: { llmContent: `<untrusted_context>\nOutput: ${output}\nExit Code: 2\nProcess Group PGID: 77\n</untrusted_context>`, returnDisplay: 'x' },
    };
    const queue = path.join(tmp, 'cli-uploads');
    const env = { ...process.env, ...rgw.env, SPILLWAY_STORE: `s3://${BUCKET}/cli`, SPILLWAY_UPLOAD_QUEUE: queue, SPILLWAY_CLI: cli };
    const r = spawnSync(process.execPath, [cli, 'hook', 'gemini-cli'], { input: JSON.stringify(event), encoding: 'utf8', env });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('tailToolCallRequest');
    await queueEmptied(queue);
    const keys = (await rgw.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `cli/gemini-cli/${sessionId}/` }))).Contents?.map((o) => o.Key!) ?? [];
    expect(keys.filter((k) => k.endsWith('.txt'))).toHaveLength(1);
    expect(keys).toContain(`cli/gemini-cli/${sessionId}/transcript.jsonl`);
  }, 120_000);
});
