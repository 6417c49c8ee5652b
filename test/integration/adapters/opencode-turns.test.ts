// The real opencode (1.18.33, offline against a local chat-completions mock)
// with Spillway's plugin: each model API call of a session is recorded in the
// session folder's `.spillway-calls.jsonl`, and `spillway turns` charts the
// session from it: one point per call with the token counts the mock reported
// (cached tokens included), the spilled build attributed to the turn of the
// call that asked for it. The record itself is never listed as a blob.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failingBuild } from './helpers/failing-build';
import { startMockOpenAI, type OpenAIUsage } from './helpers/mock-openai';
import { makeOpencodeHome, runOpencode, type OpencodeHome } from './helpers/opencode-run';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');

/** What the mock reports for the session's two calls: a cached prefix each, as providers do. */
const USAGE: OpenAIUsage[] = [
  { prompt_tokens: 5_321, completion_tokens: 41, prompt_tokens_details: { cached_tokens: 1_200 } },
  { prompt_tokens: 6_987, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 5_000 } },
];

function spillway(h: OpencodeHome, ...args: string[]) {
  const res = spawnSync(process.execPath, [cli, ...args], { env: { ...process.env, ...h.env }, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

interface TurnsJson {
  session: { source: string; id: string };
  points: Array<{ index: number; promptTokens: number; outputTokens: number; blobs: string[]; parts: Array<{ kind: string; toolCallId?: string; spilled?: boolean; tokens: number }> }>;
  blobs: Array<{ toolCallId?: string; turn?: number; path: string }>;
  tokensSaved: { tokens: number; blobsWithoutTurn: number };
}

describe('opencode per-turn chart from the plugin', () => {
  let h: OpencodeHome;
  let sessionDir: string;
  let callId: string;

  beforeAll(async () => {
    if (!fs.existsSync(path.join(repo, 'dist', 'opencode-plugin.js')) || !fs.existsSync(cli)) throw new Error('build first: node esbuild.mjs');
    const build = failingBuild(300_000, 2, () => 0.37, 0);
    h = await makeOpencodeHome();
    const mock = await startMockOpenAI((req) => {
      // opencode's title request has no tools: answer it with text, usage left to the default.
      if (!Array.isArray(req.tools)) return { kind: 'text', text: 'title' };
      const done = req.messages.filter((m) => m.role === 'tool').length;
      if (done === 0) return { kind: 'tool_call', name: 'bash', args: { command: build.command, description: 'build' }, usage: USAGE[0] };
      return { kind: 'text', text: 'done', usage: USAGE[1] };
    });
    h.writeConfig(mock.baseURL, { permission: { bash: { '*': 'allow' } } });
    const install = spillway(h, 'hook', 'install', 'opencode', '--user');
    expect(install.code, install.stderr).toBe(0);
    const run = await runOpencode(h, 'build it');
    await mock.close();
    expect(run.code, run.stderr).toBe(0);
    const root = path.join(h.dataDir, 'opencode', 'spillway');
    const sessions = fs.readdirSync(root).filter((n) => n.startsWith('ses_'));
    expect(sessions).toHaveLength(1);
    sessionDir = path.join(root, sessions[0]!);
    const logs = fs.readdirSync(sessionDir).filter((n) => n.endsWith('.log'));
    expect(logs).toHaveLength(1);
    callId = path.basename(logs[0]!, '.log');
  }, 600_000);

  afterAll(() => {
    if (h) fs.rmSync(h.root, { recursive: true, force: true });
  });

  it('records one line per API call, 0600 in the private session folder', () => {
    const file = path.join(sessionDir, '.spillway-calls.jsonl');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(sessionDir).mode & 0o777).toBe(0o700);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { toolCalls: Array<{ id: string; tool: string }> });
    expect(lines).toHaveLength(2);
    expect(lines[0]!.toolCalls.map((t) => [t.id, t.tool])).toEqual([[callId, 'bash']]);
    expect(lines[1]!.toolCalls).toEqual([]);
  });

  it('charts one point per call with the counts the model API reported, the spill on the turn that asked for it', () => {
    const res = spillway(h, 'turns', path.basename(sessionDir), '--json');
    expect(res.code, res.stderr).toBe(0);
    const turns = JSON.parse(res.stdout) as TurnsJson;
    expect(turns.session.source).toBe('opencode');
    expect(turns.points.map((p) => [p.promptTokens, p.outputTokens])).toEqual(USAGE.map((u) => [u.prompt_tokens, u.completion_tokens]));
    expect(turns.blobs).toHaveLength(1);
    expect(turns.blobs[0]).toMatchObject({ toolCallId: callId, turn: 1, path: path.join(sessionDir, `${callId}.log`) });
    expect(turns.points[0]!.blobs).toHaveLength(1);
    const result = turns.points[1]!.parts.find((p) => p.kind === 'tool-result');
    expect(result).toMatchObject({ toolCallId: callId, spilled: true });
    // opencode alone would have sent the 50 KB tail of the 300 KB build: the digest saved most of that on the second call.
    expect(turns.tokensSaved.blobsWithoutTurn).toBe(0);
    expect(turns.tokensSaved.tokens).toBeGreaterThan(10_000);
  });

  it('prints the chart as a table', () => {
    const res = spillway(h, 'turns', path.basename(sessionDir));
    expect(res.code, res.stderr).toBe(0);
    const rows = res.stdout.split('\n').filter((l) => /^\s*[12]\s/.test(l));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain(String(USAGE[0]!.prompt_tokens));
    expect(rows[1]).toContain(String(USAGE[1]!.prompt_tokens));
    // The digest is sent from the second call on: its saving counts once.
    expect(res.stdout).toMatch(/input tokens not re-sent over 1 call\(s\)/);
  });

  it('does not list the record as a blob', () => {
    const listed = JSON.parse(spillway(h, 'list', '--json').stdout) as { sessions: Array<{ id: string; blobs: Array<{ path: string }> }> };
    const session = listed.sessions.find((s) => s.id === path.basename(sessionDir));
    expect(session?.blobs.map((b) => path.basename(b.path))).toEqual([`${callId}.log`]);
  });
});
