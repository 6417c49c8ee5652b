// Turn parts, drops and read-backs on the fixture home (the real Claude Code
// 2.1.332 sessions among them), and the tokens-saved baseline.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { baselineChars, estimateTokensSaved } from '../../../src/catalog/turns/turns';
import type { BlobInfo, SessionInfo, TurnPoint, TurnSeries } from '../../../src/catalog/types';
import { useFixtureCatalog } from './fixture-catalog';

const REAL_SESSION = '178b4d38-13b0-42e7-9299-816fbc78abe5';
const ctx = useFixtureCatalog('turns-unit-');

async function series(id: string): Promise<{ session: SessionInfo; series: TurnSeries }> {
  const session = ctx.catalog.findSessions(id)[0]!;
  return { session, series: (await ctx.catalog.turnsFor(session.key))! };
}

function sumsToGrowth(p: TurnPoint): void {
  if (p.delta > 0) expect(p.parts.reduce((s, x) => s + x.tokens, 0)).toBe(p.delta);
}

async function append(file: string, lines: unknown[]): Promise<void> {
  await fsp.appendFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  await ctx.catalog.scan();
}

describe('what made each turn grow', () => {
  it('splits a real Claude Code session: the spilled Bash results by their digest, with the blob; the inline Read; the rest', async () => {
    const { session, series: s } = await series(REAL_SESSION);
    s.points.forEach(sumsToGrowth);
    expect(s.points.every((p) => p.drop === null)).toBe(true);
    const tools = s.points.map((p) => p.parts.filter((x) => x.kind === 'tool-result').map((x) => `${x.tool}${x.spilled ? ' spilled' : ''}`));
    expect(tools).toEqual([[], ['Bash spilled'], ['Bash spilled'], ['Read']]);
    // A spilled result names its blob, and the blob was made by that turn's tool call.
    for (const p of s.points) {
      for (const part of p.parts.filter((x) => x.spilled)) {
        const blob = session.blobs.find((b) => b.path === part.path)!;
        expect(blob.toolCallId).toBe(part.toolCallId);
        expect(blob.turn).toBe(p.index - 1);
        // What entered the prompt is the preview Claude Code showed, not the file.
        expect(part.tokens).toBeLessThan(blob.bytes / 4);
      }
    }
    // The first call: the prompt the user typed and the rest (system prompt, tools).
    expect(s.points[0]!.parts.map((x) => x.kind)).toEqual(['user', 'other']);
    expect(s.points[1]!.parts.map((x) => x.kind)).toContain('assistant');
  });

  it('names a compaction and measures its delta from the previous call, negative', async () => {
    const { series: s } = await series(ctx.fx.claude.sessionId);
    const i = s.points.findIndex((p) => p.compaction);
    expect(i).toBeGreaterThan(0);
    const [before, after] = [s.points[i - 1]!, s.points[i]!];
    expect(after.delta).toBe(after.promptTokens - before.promptTokens);
    expect(after.delta).toBeLessThan(0);
    expect(after.drop).toEqual({ kind: 'compaction', tokens: before.promptTokens - after.promptTokens });
    s.points.forEach(sumsToGrowth);
  });

  it("tells pi-condense's prune from Spillway's flush in a pi session", async () => {
    const { series: before } = await series(ctx.fx.pi.sessionId);
    const last = before.points.at(-1)!.promptTokens;
    const usage = (input: number) => ({ input, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: input + 10 });
    const at = (n: number) => new Date(Date.UTC(2026, 0, 2, 0, 0, n)).toISOString();
    await append(ctx.fx.pi.transcript, [
      { type: 'message', id: 'g1', timestamp: at(1), message: { role: 'assistant', content: [], usage: usage(last + 4000) } },
      { type: 'custom', id: 'g2', timestamp: at(2), customType: 'context-prune-index', data: { toolCalls: [] } },
      { type: 'context_edit', id: 'g3', timestamp: at(3), targetId: 'nope', replacement: { content: [{ type: 'text', text: 'pruned' }] } },
      { type: 'message', id: 'g4', timestamp: at(4), message: { role: 'assistant', content: [], usage: usage(last + 1000) } },
      { type: 'custom', id: 'g5', timestamp: at(5), customType: 'spillway-spill', data: { v: 1 } },
      { type: 'context_edit', id: 'g6', timestamp: at(6), targetId: 'nope', replacement: { content: [{ type: 'text', text: 'spilled' }] } },
      { type: 'message', id: 'g7', timestamp: at(7), message: { role: 'assistant', content: [], usage: usage(last + 200) } },
    ]);
    const { series: s } = await series(ctx.fx.pi.sessionId);
    expect(s.points.slice(-3).map((p) => [p.delta, p.drop])).toEqual([
      [4000, null],
      [-3000, { kind: 'pi-condense-prune', tokens: 3000 }],
      [-800, { kind: 'spillway-flush', tokens: 800 }],
    ]);
  });
});

describe('failed calls', () => {
  it('charts no point for a call pi kept after it failed (usage all 0), and gives its growth to the retry', async () => {
    const { series: before } = await series(ctx.fx.pi.sessionId);
    const last = before.points.at(-1)!.promptTokens;
    const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
    const at = (n: number) => new Date(Date.UTC(2026, 0, 3, 0, 0, n)).toISOString();
    await append(ctx.fx.pi.transcript, [
      { type: 'message', id: 'f1', timestamp: at(1), message: { role: 'assistant', content: [], usage: zero, stopReason: 'error', errorMessage: '429 rate limited' } },
      { type: 'message', id: 'f2', timestamp: at(2), message: { role: 'assistant', content: [], usage: { ...zero, input: last + 150, output: 5 }, stopReason: 'stop' } },
    ]);
    const { series: s } = await series(ctx.fx.pi.sessionId);
    expect(s.points).toHaveLength(before.points.length + 1);
    expect(s.points.at(-1)!.delta).toBe(150);
    expect(s.points.every((p) => p.promptTokens > 0)).toBe(true);
  });
});

describe('blobs read back', () => {
  it('counts later tool calls that name the blob, by path or file name', async () => {
    const { session } = await series(REAL_SESSION);
    const [first, second] = [...session.blobs].sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0));
    const transcript = session.transcript!;
    const usage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 30_000, output_tokens: 20 };
    const assistant = (id: string, uses: Array<{ id: string; name: string; input: unknown }>) => ({
      type: 'assistant',
      isSidechain: false,
      timestamp: '2026-11-29T22:00:00.000Z',
      message: { id, role: 'assistant', model: 'claude', content: uses.map((u) => ({ type: 'tool_use', ...u })), usage },
    });
    await append(transcript, [
      assistant('msg_rb1', [
        { id: 'toolu_rb_read', name: 'Read', input: { file_path: first!.path, offset: 100, limit: 50 } },
        { id: 'toolu_rb_sed', name: 'Bash', input: { command: `sed -n '4990,5000p' ${first!.path} | tail -3` } },
      ]),
      assistant('msg_rb2', [{ id: 'toolu_rb_other', name: 'Bash', input: { command: 'ls /tmp/elsewhere/notes.txt' } }]),
    ]);
    const { series: s } = await series(REAL_SESSION);
    const use = new Map(s.blobs.map((b) => [b.path, b]));
    expect(use.get(first!.path)!.readBack).toBe(2);
    expect(use.get(second!.path)!.readBack).toBe(0);
    expect(use.get(first!.path)!.madeBy).toBe('agent');
    // `spillway turns` lists through a streaming scan, which leaves out the paths calls name: it reads the session
    // again for its turns, and counts the same.
    const streaming = new Catalog({ env: ctx.fx.env, roots: ctx.fx.userRoots, cacheDir: path.join(ctx.dir, 'cache-turns') });
    const listing = await streaming.scanSessions();
    expect(streaming.scanStats().described).toBeGreaterThan(0);
    expect(await listing.turns(session)).toEqual(s);
    await listing.close();
    await streaming.dispose();
  });
});

describe('tokens saved', () => {
  const point = (index: number, compaction = false): TurnPoint => ({ index, timestamp: '', promptTokens: 0, delta: 0, parts: [], drop: null, outputTokens: 0, compaction, blobs: [] });
  const blob = (over: Partial<BlobInfo>): BlobInfo => ({ key: '/b', path: '/b', sessionKey: 's', name: 'b', kind: 'tool-result', bytes: 300_000, createdAt: '', mtimeMs: 0, attribution: 'transcript', turn: 1, digestChars: 2000, ...over });
  const points = [point(1), point(2), point(3), point(4)];

  it("counts against what the agent would have shown: ~nothing for Claude Code's own 2 KB preview", () => {
    expect(baselineChars('claude-code', 300_000)).toBe(2_300);
    expect(baselineChars('claude-code', 20_000)).toBe(20_000);
    expect(baselineChars('pi', 300_000)).toBe(50 * 1024);
    // Claude Code's own spill: Spillway changed nothing.
    const own = estimateTokensSaved(points, [blob({})], 'claude-code');
    expect([own.tokens, own.agentSpills, own.blobs[0]!.counted]).toEqual([0, 1, false]);
    // Spillway's digest of a 300 KB output Claude Code would have cut to 2 KB itself: 75 tokens a call.
    const ours = estimateTokensSaved(points, [blob({ madeBy: 'spillway' })], 'claude-code');
    expect(ours.blobs[0]).toMatchObject({ baselineTokens: 575, digestTokens: 500, resentTurns: 3, saved: 225, counted: true });
    expect([ours.tokens, ours.contextTokens, ours.calls]).toEqual([225, 75, 3]);
    // A 20 KB output Claude Code would have shown whole: the digest saves the difference on every re-send.
    const mid = estimateTokensSaved(points, [blob({ madeBy: 'spillway', bytes: 20_000 })], 'claude-code');
    expect(mid.tokens).toBe((5000 - 500) * 3);
  });

  it('stops at a compaction: the context no longer holds the digest', () => {
    const compacted = [point(1), point(2), point(3, true), point(4)];
    const s = estimateTokensSaved(compacted, [blob({ madeBy: 'spillway', bytes: 20_000 })], 'claude-code');
    expect([s.blobs[0]!.resentTurns, s.contextTokens, s.calls]).toEqual([1, 0, 1]);
  });
});
