// Claude Code's hook with SPILLWAY_STORE=s3://… against a real Ceph RGW: the detached uploader puts the blobs,
// their records and the session's transcript in the bucket, and `turns` on the bucket then gives the answer
// `turns` gives on the local folder. A transcript that grows goes up again; nothing else is sent twice.
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toChartData } from '../../../src/extension/chartModel';
import { RemoteRoots, remoteTopNodes } from '../../../src/extension/remoteModel';
import { copyRealSession, hookInput, SESSION } from '../../s3/claude-session';
import { startRgw, type Rgw } from '../../s3/rgw';
import { uploadAll } from '../../s3/upload-all';
import { tempDir } from '../../unit/spill/temp-dirs';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
const BUCKET = 'hook-spills';
const ROOT = `s3://${BUCKET}/team`;
let rgw: Rgw;
let home: string;
let config: string;
let transcriptFile: string;
let env: NodeJS.ProcessEnv;

function cliRun(args: string[], extra: NodeJS.ProcessEnv = {}, input?: string) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', input, env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: config, ...extra } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const drained = () => uploadAll(env.SPILLWAY_UPLOAD_QUEUE!, () => cliRun(['upload'], env));

async function keys(): Promise<Array<{ key: string; size: number }>> {
  const listed = await rgw.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'team/' }));
  return (listed.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size! })).sort((a, b) => a.key.localeCompare(b.key));
}

/** The hook's answer to a recorded call (with `extra` settings): a digest naming the bucket's copy. */
function hook(event: string, extra: NodeJS.ProcessEnv = {}): string {
  const r = cliRun(['hook', 'claude-code'], { ...env, ...extra }, hookInput(event, config));
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(`spillway show ${ROOT}/claude-code/${SESSION}/`);
  return r.stdout;
}

beforeAll(async () => {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'pipe' });
  rgw = await startRgw();
  await rgw.createBucket(BUCKET);
  home = tempDir('spillway-s3hook-');
  config = path.join(home, '.claude');
  ({ transcriptFile } = copyRealSession(config));
  const state = tempDir('spillway-s3hook-state-');
  env = { ...rgw.env, SPILLWAY_STORE: ROOT, XDG_STATE_HOME: state, SPILLWAY_UPLOAD_QUEUE: path.join(state, 'uploads') };
}, 240_000);
afterAll(async () => {
  await rgw?.stop();
});

describe("Claude Code's hook into s3://bucket/prefix (real RGW)", () => {
  it('puts blobs, records and the transcript in the bucket; turns on the bucket answers as on the folder', async () => {
    for (const event of ['hookstdin-1.json', 'hookstdin-2.json']) hook(event);
    await drained();
    const there = await keys();
    const base = `team/claude-code/${SESSION}/`;
    expect(there.filter((k) => k.key.endsWith('.txt'))).toHaveLength(2);
    expect(there.filter((k) => k.key.endsWith('.json'))).toHaveLength(2);
    expect(there.every((k) => k.key.startsWith(base))).toBe(true);
    const copy = await rgw.client().send(new GetObjectCommand({ Bucket: BUCKET, Key: `${base}transcript.jsonl` }));
    expect(await copy.Body!.transformToString()).toBe(fs.readFileSync(transcriptFile, 'utf8'));

    const local = cliRun(['turns', SESSION, '--json', '--no-default-roots', '--root', path.join(config, 'projects')]);
    expect(local.code, local.stderr).toBe(0);
    const remote = cliRun(['turns', SESSION, '--root', ROOT, '--json'], rgw.env);
    expect(remote.code, remote.stderr).toBe(0);
    // The local answer with each blob's path said as its copy's URL (its content's sha256) and the session as its key prefix.
    let text = local.stdout;
    const sessionDir = path.join(config, 'projects', '-home-dev-work', SESSION);
    for (const name of fs.readdirSync(path.join(sessionDir, 'tool-results'))) {
      const file = path.join(sessionDir, 'tool-results', name);
      const sha = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
      text = text.split(JSON.stringify(file).slice(1, -1)).join(`${ROOT}/claude-code/${SESSION}/${sha}.txt`);
    }
    text = text.split(JSON.stringify(sessionDir).slice(1, -1)).join(`${ROOT}/claude-code/${SESSION}`);
    const want = JSON.parse(text) as { points: unknown[]; blobs: Array<{ tool?: string; turn?: number }>; tokensSaved: { tokens: number } };
    expect(want.points.length).toBeGreaterThan(2);
    expect(want.blobs).toHaveLength(2);
    expect(want.blobs.every((b) => b.tool === 'Bash' && (b.turn ?? 0) > 0)).toBe(true);
    expect(want.tokensSaved.tokens).toBeGreaterThan(0);
    expect(JSON.parse(remote.stdout)).toEqual(want);

    // The chart of the session in VS Code's tree, from the same copies: a point per call, the same saving.
    const roots = new RemoteRoots(() => rgw.client());
    roots.sync([ROOT]);
    const [top] = remoteTopNodes(roots);
    await top!.root.loadMore();
    const read = await top!.root.turns(top!.root.listed().find((x) => x.id === SESSION)!);
    roots.dispose();
    if ('error' in read) throw new Error(read.error);
    const chart = toChartData(read.session, read.series, { contextWindow: 200_000, budgetDelta: 0.1 });
    expect(chart.turns).toHaveLength(want.points.length);
    expect(chart.tokensSaved).toBe(want.tokensSaved.tokens);
    expect(chart.blobCount).toBe(2);
  });

  it('a transcript that grew goes up again at the next call; the blobs are not sent again', async () => {
    const before = await keys();
    fs.appendFileSync(transcriptFile, JSON.stringify({ type: 'user', sessionId: SESSION, message: { role: 'user', content: 'one more' } }) + '\n');
    hook('hookstdin-1.json');
    await drained();
    const after = await keys();
    const transcript = after.find((k) => k.key.endsWith('/transcript.jsonl'))!;
    expect(transcript.size).toBe(fs.statSync(transcriptFile).size);
    expect(after.map((k) => k.key)).toEqual(before.map((k) => k.key));
  });

  it('with the endpoint down the hook answers as it does with it up; the next run sends what it queued, once', async () => {
    const before = await keys();
    const answer = hook('hookstdin-2.json');
    await drained();
    fs.appendFileSync(transcriptFile, JSON.stringify({ type: 'user', sessionId: SESSION, message: { role: 'user', content: 'while down' } }) + '\n');
    expect(hook('hookstdin-2.json', { AWS_ENDPOINT_URL: 'http://127.0.0.1:9' })).toBe(answer);
    await drained();
    const after = await keys();
    expect(after.map((k) => k.key)).toEqual(before.map((k) => k.key));
    expect(after.find((k) => k.key.endsWith('/transcript.jsonl'))!.size).toBe(fs.statSync(transcriptFile).size);
  });
});
