// What `turns` and `list` say of a session on an s3:// root, held against what they say of the local copy: the same
// API calls (all of them when the agent queues its transcript at each turn's end; else those the copy held when it
// went up: a copy queued at an agent's last tool hook lacks the calls made after it), each spilled blob with the same call, tool and turn, named by its URL under AGENT/SESSION/.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { expect } from 'vitest';

export interface TurnsJson {
  session: { source: string; id: string; title: string | null };
  points: Array<{ index: number; promptTokens: number; outputTokens: number; blobs: string[]; parts: Array<{ kind: string; toolCallId?: string; spilled?: boolean; tokens: number; path?: string }> }>;
  blobs: Array<{ path: string; bytes: number; toolCallId?: string; tool?: string; turn?: number }>;
}

interface ListJson {
  sessions: Array<{ source: string; id: string; blobs: Array<{ path: string; bytes: number }> }>;
}

const repo = path.resolve(__dirname, '../..');
const cli = path.join(repo, 'dist', 'cli.js');

export function spillwayJson<T>(args: string[], env: NodeJS.ProcessEnv): T {
  const r = spawnSync(process.execPath, [cli, ...args, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, ...env } });
  expect(r.status, `spillway ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as T;
}

export interface SameAnswers {
  root: string;
  agent: string;
  sessionId: string;
  /** The environment `turns` and `list` find the local copy with (default roots). */
  localEnv: NodeJS.ProcessEnv;
  /** The environment that reaches the bucket. */
  remoteEnv: NodeJS.ProcessEnv;
  /** The local blobs that travel (Spillway's; the agent's own files stay on the machine). Default: all. */
  travels?: (blob: TurnsJson['blobs'][number]) => boolean;
  /** The transcript was queued at the turn's end too, so its copy holds every call; else a prefix of them. */
  everyCall?: boolean;
}

/** Checks the bucket's answers against the local copy's; returns both `turns` answers for further checks. */
export function expectSameAnswers(o: SameAnswers): { local: TurnsJson; remote: TurnsJson } {
  const all = spillwayJson<TurnsJson>(['turns', o.sessionId], o.localEnv);
  const local = { ...all, blobs: all.blobs.filter(o.travels ?? (() => true)) };
  const remote = spillwayJson<TurnsJson>(['turns', o.sessionId, '--root', o.root], o.remoteEnv);
  // The same session, under the same title (one the transcript does not hold travels with its copy).
  expect(remote.session).toMatchObject({ source: local.session.source, id: local.session.id, title: local.session.title });
  // Something to compare: calls, and blobs each tied to a call at a turn.
  expect(local.points.length).toBeGreaterThan(1);
  expect(local.blobs.length).toBeGreaterThan(0);
  for (const b of local.blobs) expect(b.turn, JSON.stringify(b)).toBeGreaterThan(0);
  const facts = (blobs: TurnsJson['blobs']) => blobs.map((b) => [b.toolCallId, b.tool, b.turn, b.bytes]).sort();
  expect(facts(remote.blobs)).toEqual(facts(local.blobs));
  for (const b of remote.blobs) expect(b.path.startsWith(`${o.root}/${o.agent}/${o.sessionId}/`), b.path).toBe(true);
  // The points up to the copy's last call, as the folder counts them; each point's blobs are the same ones by URL.
  const byPath = new Map(local.blobs.map((b) => [b.path, facts([b])[0]]));
  const byUrl = new Map(remote.blobs.map((b) => [b.path, facts([b])[0]]));
  // A result the folder shows by the agent's own file (which stays on the machine) the bucket shows by Spillway's blob of that call.
  const byCall = new Map(local.blobs.map((b) => [b.toolCallId, facts([b])[0]]));
  const point = (p: TurnsJson['points'][number], blob: Map<string, unknown>) => ({
    ...p,
    blobs: p.blobs.filter((b) => blob.has(b)).map((b) => blob.get(b)),
    parts: p.parts.map((part) => (part.path !== undefined ? { ...part, path: blob.get(part.path) ?? byCall.get(part.toolCallId) ?? part.path } : part)),
  });
  expect(remote.points.length).toBeGreaterThanOrEqual(Math.max(...local.blobs.map((b) => b.turn ?? 0)));
  if (o.everyCall) expect(remote.points.length).toBe(local.points.length);
  expect(remote.points.map((p) => point(p, byUrl))).toEqual(local.points.slice(0, remote.points.length).map((p) => point(p, byPath)));
  // list: the session under its agent, the same blob sizes.
  const listedLocal = spillwayJson<ListJson>(['list'], o.localEnv).sessions.find((s) => s.id === o.sessionId);
  const listedRemote = spillwayJson<ListJson>(['list', '--root', o.root], o.remoteEnv).sessions.find((s) => s.id === o.sessionId);
  expect(listedRemote?.source).toBe(o.agent);
  const travelled = new Set(local.blobs.map((b) => b.path));
  expect(listedRemote?.blobs.map((b) => b.bytes).sort()).toEqual(listedLocal?.blobs.filter((b) => travelled.has(b.path)).map((b) => b.bytes).sort());
  return { local, remote };
}
