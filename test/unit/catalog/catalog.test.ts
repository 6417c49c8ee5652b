import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { useFixtureCatalog } from './fixture-catalog';

const ctx = useFixtureCatalog('catalog-unit-');

const blobAt = (p: string) => ctx.catalog.blob(p);

describe('sources', () => {
  it('finds one session per layout', () => {
    const sources = ctx.catalog.sessions().map((s) => s.source).sort();
    expect(sources).toEqual(['claude-code', 'claude-code', 'claude-code', 'dsh', 'gemini-cli', 'opencode', 'orgrt', 'pi', 'spillway']);
  });

  it('names Claude Code blobs from the transcript tool_use blocks, for every file kind', () => {
    expect(blobAt(ctx.fx.claude.blobs.grep)).toMatchObject({ tool: 'Grep', args: 'TODO', kind: 'tool-result', attribution: 'transcript', turn: 1 });
    expect(blobAt(ctx.fx.claude.blobs.json)).toMatchObject({ tool: 'WebFetch', kind: 'tool-result-json', turn: 2 });
    expect(blobAt(ctx.fx.claude.blobs.shell)).toMatchObject({ tool: 'Bash', args: 'npm run build', kind: 'shell-output', toolCallId: 'toolu_01BashFFFFFFFFFFFFFFFFFFFF', turn: 3 });
    expect(blobAt(ctx.fx.claude.blobs.mcp)).toMatchObject({ tool: 'mcp__github__search_issues', kind: 'mcp', turn: 4 });
    expect(blobAt(ctx.fx.claude.blobs.hook)).toMatchObject({ kind: 'hook', tool: 'hook' });
    expect(blobAt(ctx.fx.claude.blobs.subagent)).toMatchObject({ tool: 'Glob', attribution: 'transcript', turn: undefined });
    expect(blobAt(ctx.fx.claude.blobs.request)).toMatchObject({ tool: 'Bash', turn: 6 });
    // The content-replacement line says what the model saw instead of the full result.
    expect(blobAt(ctx.fx.claude.blobs.request)!.digestChars).toBeLessThan(blobAt(ctx.fx.claude.blobs.request)!.bytes / 4);
  });

  it('attributes a hook-replaced b<id>.txt through the manifest, and lists an unnamed one unattributed', () => {
    expect(blobAt(ctx.fx.claude.blobs.hookReplaced)).toMatchObject({ tool: 'Bash', args: 'npm test', attribution: 'manifest', toolCallId: 'toolu_01HookEEEEEEEEEEEEEEEEEEEE', turn: 5 });
    expect(blobAt(ctx.fx.claude.blobs.unattributed)).toMatchObject({ kind: 'shell-output', attribution: 'none', tool: undefined });
  });

  it('reads session facts from the transcript and counts what it skipped', () => {
    const s = ctx.catalog.findSessions(ctx.fx.claude.sessionId)[0]!;
    expect(s).toMatchObject({ title: 'Fix the flaky build', cwd: '/home/dev/acme-api', transcript: ctx.fx.claude.transcript });
    // unknown line type + non-JSON line + torn last line + torn manifest line + the symlink
    expect(s.skipped).toBe(5);
    expect(s.blobs.map((b) => b.path)).not.toContain(ctx.fx.claude.symlink);
  });

  it('reads the real Claude Code 2.1.332 sessions', () => {
    const [run1, run2] = ctx.fx.claude.realSessionIds.map((id) => ctx.catalog.findSessions(id)[0]!);
    expect(run1!.blobs.map((b) => [b.tool, b.turn])).toEqual([['Bash', 1], ['Bash', 2]]);
    expect(run1!.blobs[0]!.args).toBe('seq 1 60000');
    // run2: a hook replaced both outputs and no manifest records them.
    expect(run2!.blobs.every((b) => b.kind === 'shell-output' && b.attribution === 'none')).toBe(true);
  });

  it('reads pi: condense index, bash full outputs, turns', () => {
    expect(blobAt(ctx.fx.pi.condenseBlob)).toMatchObject({ tool: 'search', attribution: 'index', turn: 1, toolCallId: 'call_search_1' });
    expect(blobAt(ctx.fx.pi.bashLog)).toMatchObject({ tool: 'bash', args: 'make all', kind: 'shell-output', turn: 2, digestChars: 2000 });
    const s = ctx.catalog.findSessions(ctx.fx.pi.sessionId)[0]!;
    expect(s).toMatchObject({ cwd: '/home/dev/acme', title: 'search the catalog', skipped: 1 });
  });

  it('reads Spillway, gemini, opencode, dsh and orgrt folders', () => {
    expect(blobAt(ctx.fx.spillway.blob)).toMatchObject({ tool: 'kubectl', args: 'get pods -A', turn: 3, attribution: 'manifest' });
    expect(ctx.catalog.findSessions(ctx.fx.spillway.sessionId)).toHaveLength(1);
    expect(blobAt(ctx.fx.gemini.blob)).toMatchObject({ tool: 'run_shell_command', toolCallId: '1772400000000-0', kind: 'shell-output' });
    expect(blobAt(ctx.fx.opencode.blob)).toMatchObject({ attribution: 'name', toolCallId: 'tool_01JQ8Z3K4M5N6P7Q8R9S' });
    expect(blobAt(ctx.fx.dsh.blob)).toMatchObject({ tool: 'shell' });
    expect(blobAt(ctx.fx.orgrt.blob)).toMatchObject({ tool: 'Bash' });
  });

  it('keeps keys stable across scans', async () => {
    const before = ctx.catalog.sessions().map((s) => [s.key, s.blobs.map((b) => b.key)]);
    const again = new Catalog({ env: ctx.fx.env, roots: ctx.fx.userRoots });
    await again.scan();
    expect(again.sessions().map((s) => [s.key, s.blobs.map((b) => b.key)])).toEqual(before);
  });

  it('only scans the named sources and roots', async () => {
    const only = new Catalog({ env: ctx.fx.env, useDefaultRoots: false, roots: [path.join(ctx.fx.home, '.claude')], sources: ['claude-code'] });
    await only.scan();
    expect(new Set(only.sessions().map((s) => s.source))).toEqual(new Set(['claude-code']));
    expect(only.knownRoots().map((r) => r.path)).toEqual([path.join(ctx.fx.home, '.claude')]);
  });
});

describe('previews and lines', () => {
  it('reads a bounded head cut at a line boundary, and flags binary blobs', async () => {
    const head = await ctx.catalog.preview(ctx.fx.claude.blobs.grep);
    expect(head.binary).toBe(false);
    expect(head.preview.length).toBeLessThanOrEqual(2048);
    expect(head.preview.startsWith('src/module1.ts:1:')).toBe(true);
    const full = await fsp.readFile(ctx.fx.claude.blobs.grep, 'utf8');
    expect(full.startsWith(head.preview + '\n')).toBe(true);
    expect((await ctx.catalog.preview(ctx.fx.claude.blobs.binary)).binary).toBe(true);
  });

  it('counts lines lazily and stores them on the blob', async () => {
    expect(blobAt(ctx.fx.claude.blobs.shell)!.lines).toBeUndefined();
    expect(await ctx.catalog.countLines(ctx.fx.claude.blobs.shell)).toBe(4000);
    expect(blobAt(ctx.fx.claude.blobs.shell)!.lines).toBe(4000);
  });
});

describe('turns', () => {
  it('groups Claude Code lines by message.id, skips sidechains and <synthetic>, resets at compact_boundary', async () => {
    const s = ctx.catalog.findSessions(ctx.fx.claude.sessionId)[0]!;
    const series = (await ctx.catalog.turnsFor(s.key))!;
    expect(series.points.map((p) => p.promptTokens)).toEqual([18004, 27010, 29018, 30530, 6003, 7208, 8017]);
    expect(series.points.map((p) => p.delta)).toEqual([18004, 9006, 2008, 1512, 6003 - 30530, 1205, 809]);
    expect(series.points.map((p) => p.compaction)).toEqual([false, false, false, false, true, false, false]);
    expect(series.points[0]!.outputTokens).toBe(80);
    expect(series.points[2]!.blobs).toEqual([ctx.fx.claude.blobs.shell]);
    expect(series.compactions).toBe(1);
  });

  it('estimates tokens saved: (baseline - digest) x calls until the next compaction, for Spillway\'s blobs only', async () => {
    const s = ctx.catalog.findSessions(ctx.fx.claude.sessionId)[0]!;
    const saved = (await ctx.catalog.turnsFor(s.key))!.tokensSaved;
    // Claude Code's own spill: Spillway changed nothing, so it saves nothing.
    const grep = saved.blobs.find((b) => b.key === ctx.fx.claude.blobs.grep)!;
    expect(grep.counted).toBe(false);
    expect(grep.saved).toBe(0);
    // issued by call 1, re-sent by calls 2, 3, 4; call 5 follows the compaction
    expect(grep.resentTurns).toBe(3);
    expect(grep.digestKnown).toBe(true);
    const ours = saved.blobs.filter((b) => b.counted);
    expect(ours.length).toBeGreaterThan(0);
    for (const b of ours) expect(b.saved).toBe(Math.max(0, b.baselineTokens - b.digestTokens) * b.resentTurns);
    expect(saved.tokens).toBe(saved.blobs.reduce((sum, b) => sum + b.saved, 0));
    expect(saved.agentSpills).toBe(s.blobs.length - ours.length - s.blobs.filter((b) => b.turn === undefined && (b.madeBy === 'spillway' || b.attribution === 'manifest')).length);
    expect(saved.charsPerToken).toBe(4);
  });

  it('reads pi usage and compaction entries', async () => {
    const s = ctx.catalog.findSessions(ctx.fx.pi.sessionId)[0]!;
    const series = (await ctx.catalog.turnsFor(s.key))!;
    expect(series.points.map((p) => [p.promptTokens, p.delta, p.compaction])).toEqual([[2000, 2000, false], [2500, 500, false], [900, -1600, true]]);
  });
});

describe('options', () => {
  it('previewOnScan reads every head during the scan', async () => {
    const eager = new Catalog({ env: ctx.fx.env, roots: ctx.fx.userRoots, previewOnScan: true });
    await eager.scan();
    const blobs = eager.sessions().flatMap((s) => s.blobs);
    expect(blobs.every((b) => typeof b.preview === 'string' && typeof b.binary === 'boolean')).toBe(true);
    expect(eager.blob(ctx.fx.claude.blobs.binary)!.binary).toBe(true);
  });

  it('fires one full event per scan, and names no session twice', async () => {
    const c = new Catalog({ env: ctx.fx.env, roots: ctx.fx.userRoots });
    const events: Array<{ full: boolean }> = [];
    c.onDidChange((e) => events.push(e));
    await c.scan();
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual([{ changed: [], removed: [], full: true }]);
    await c.dispose();
  });
});
