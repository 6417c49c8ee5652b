// Drops are named from what the session records right before them (pi-condense's
// summary message and flush metrics, its index, Spillway's spill entry, Claude
// Code's micro-compaction), "unexplained" only when nothing does; a blob
// fetched back by id (pi-condense's context_tree_query) counts as read back,
// at its turn, with the tokens its result added.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';

let dir: string;
let catalog: Catalog | undefined;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'turn-drops-'));
});
afterEach(async () => {
  await catalog?.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

const ID = 'dddd4444';
const at = (n: number) => new Date(Date.UTC(2026, 4, 1, 0, 0, n)).toISOString();
const usage = (input: number) => ({ input, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: input + 10 });

/** A pi session of `entries` (after its header) with one pi-condense-style blob for call `c1`; its catalog and turns. */
async function piSession(entries: unknown[]) {
  const agentDir = path.join(dir, 'pi-agent');
  const sessions = path.join(agentDir, 'sessions', '--home-dev-w--');
  await fsp.mkdir(path.join(sessions, `${ID}-blobs`), { recursive: true });
  const blob = path.join(sessions, `${ID}-blobs`, 'c1.txt');
  await fsp.writeFile(blob, 'spilled line\n'.repeat(10_000));
  const lines = [{ type: 'session', version: 3, id: ID, cwd: '/home/dev/w', timestamp: at(0) }, ...entries];
  await fsp.writeFile(path.join(sessions, `2026-05-01T00-00-00-000Z_${ID}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), PI_CODING_AGENT_DIR: agentDir, TMPDIR: path.join(dir, 'tmp') }, sources: ['pi'] });
  await catalog.scan();
  const session = catalog.findSessions(ID)[0]!;
  return { blob, series: (await catalog.turnsFor(session.key))! };
}

let n = 0;
const call = (input: number, toolCalls: Array<{ id: string; name: string; arguments: unknown }> = []) => ({
  type: 'message',
  id: `a${++n}`,
  timestamp: at(n),
  message: { role: 'assistant', content: toolCalls.map((t) => ({ type: 'toolCall', ...t })), usage: usage(input), stopReason: toolCalls.length ? 'toolUse' : 'stop' },
});
const result = (toolCallId: string, chars: number) => ({
  type: 'message',
  id: `r${++n}`,
  timestamp: at(n),
  message: { role: 'toolResult', toolCallId, toolName: 'bash', content: [{ type: 'text', text: 'x'.repeat(chars) }], isError: false },
});
const summary = (refs: Array<{ shortId: string; toolCallId: string }>) => ({
  type: 'custom_message',
  id: `s${++n}`,
  timestamp: at(n),
  customType: 'context-prune-summary',
  content: '<context-prune-summary>- bash: a long build log [t1]</context-prune-summary>',
  display: false,
  details: { toolCallRefs: refs },
});
const flush = (outcome: string) => ({ type: 'custom', id: `f${++n}`, timestamp: at(n), customType: 'flush-metrics', data: { outcome, tokensBefore: 9000 } });

describe('drops named from what the session records', () => {
  it('names pi-condense prunes recorded in the same or the previous turn, and only the rest unexplained', async () => {
    const { series } = await piSession([
      { type: 'message', id: 'u1', timestamp: at(0), message: { role: 'user', content: 'build it' } },
      call(1000, [{ id: 'c1', name: 'bash', arguments: { command: 'make' } }]),
      result('c1', 40_000),
      call(11_000),
      summary([{ shortId: 't1', toolCallId: 'c1' }]),
      call(3000), // 3: a summary right before: pruned
      flush('summarized'),
      call(3500), // 4: grew (the flush prunes the next request)
      call(2000), // 5: the record one turn before explains it
      call(1500), // 6: nothing recorded since turn 4
      flush('skipped'),
      call(1200), // 7: a flush that summarized nothing explains nothing
    ]);
    expect(series.points.map((p) => [p.index, p.drop])).toEqual([
      [1, null],
      [2, null],
      [3, { kind: 'pi-condense-prune', tokens: 8000 }],
      [4, null],
      [5, { kind: 'pi-condense-prune', tokens: 1500 }],
      [6, { kind: 'unexplained', tokens: 500 }],
      [7, { kind: 'unexplained', tokens: 300 }],
    ]);
  });

  it("counts pi-condense's context_tree_query of a blob's short ref as read back, at its turn, with its tokens", async () => {
    const { blob, series } = await piSession([
      call(1000, [{ id: 'c1', name: 'bash', arguments: { command: 'make' } }]),
      result('c1', 400),
      { type: 'custom', id: 'i1', timestamp: at(90), customType: 'context-prune-index', data: { toolCalls: [{ toolCallId: 'c1', toolName: 'bash', spillPath: '/elsewhere/c1.txt', spillBytes: 130_000 }] } },
      summary([{ shortId: 't1', toolCallId: 'c1' }]),
      call(1500, [{ id: 'q-other', name: 'context_tree_query', arguments: { ids: ['t9'] } }]),
      result('q-other', 100),
      call(1600, [{ id: 'q1', name: 'context_tree_query', arguments: { ids: ['t1'], query: 'errors' } }]),
      result('q1', 12_000),
      call(4600),
    ]);
    const use = series.blobs.find((b) => b.path === blob)!;
    expect(use.turn).toBe(1);
    expect(use.readBack).toBe(1);
    expect(use.reads).toEqual([{ turn: 3, toolCallId: 'q1', tokens: 3000 }]);
  });
});
