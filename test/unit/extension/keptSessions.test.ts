import { describe, expect, it } from 'vitest';
import type { SessionInfo, TurnSeries } from '../../../src/catalog/types';
import { KeptSessions } from '../../../src/extension/keptSessions';
import { buildTree } from '../../../src/extension/treeModel';

function memento() {
  const data = new Map<string, unknown>();
  return { data, get: <T>(k: string) => data.get(k) as T | undefined, update: async (k: string, v: unknown) => void data.set(k, JSON.parse(JSON.stringify(v))) };
}

const blob = { key: '/c/p/s/tool-results/b.txt', path: '/c/p/s/tool-results/b.txt', sessionKey: 'claude-code:/c/p/s', name: 'b.txt', kind: 'tool-result' as const, bytes: 5000, createdAt: '2026-01-01T00:00:00Z', mtimeMs: 0, attribution: 'transcript' as const };
const session: SessionInfo = { key: 'claude-code:/c/p/s', source: 'claude-code', id: 's', dir: '/c/p/s', transcript: '/c/p/s.jsonl', root: '/c', bytes: 5000, updatedAt: '2026-01-01T00:00:00Z', blobs: [blob], skipped: 0, notes: [] };
const series: TurnSeries = { sessionKey: session.key, points: [], blobs: [], compactions: 0, tokensSaved: { charsPerToken: 4, tokens: 0, contextTokens: 0, calls: 0, agentSpills: 0, blobs: [], blobsWithoutTurn: 0 }, skipped: 0 };

describe('sessions kept after their blobs were deleted', () => {
  it('lists an emptied session with 0 blobs while its transcript remains, across restarts', async () => {
    const files = new Set(['/c/p/s.jsonl']);
    const store = memento();
    const kept = new KeptSessions(store, (p) => files.has(p));
    await kept.keep(session, series);
    const again = new KeptSessions(store, (p) => files.has(p)); // a new window reads the same state
    const listed = again.list(new Set());
    expect(listed.map((s) => [s.key, s.blobs.length, s.bytes])).toEqual([[session.key, 0, 0]]);
    expect(again.get(session.key)?.series).toEqual(series);
    // The tree shows it (0 blobs) unless a filter is on.
    expect(buildTree(listed, {}, 'time')[0]?.sessions.map((s) => [s.session.key, s.shown])).toEqual([[session.key, { count: 0, bytes: 0 }]]);
    expect(buildTree(listed, { text: 'x' }, 'time')).toEqual([]);
    // Listed by the catalog again (new blobs): not twice.
    expect(again.list(new Set([session.key]))).toEqual([]);
    files.clear();
    expect(again.list(new Set())).toEqual([]);
    await again.prune(new Set());
    expect(new KeptSessions(store, () => true).list(new Set())).toEqual([]);
  });

  it('does not keep a session whose transcript is gone', async () => {
    const kept = new KeptSessions(memento(), () => false);
    await kept.keep(session, series);
    expect(kept.list(new Set())).toEqual([]);
  });
});
