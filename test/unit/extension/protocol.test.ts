import { describe, expect, it } from 'vitest';
import { isChartData, isHostToPage, isPageToHost, type ChartData } from '../../../src/webview/protocol';

const data: ChartData = {
  sessionId: 'claude-code:/x',
  title: 'fix the build — Claude Code',
  source: 'claude-code',
  contextWindow: 200000,
  budgetDelta: 0.1,
  tokensSaved: 1234,
  savedText: 'Spillway saved ≈0 tokens here.',
  contributors: [{ turn: 2, tool: 'Bash', tokens: 500, spilled: true, blobId: '/x/a.txt', label: 'Bash ls', bytes: 99, readBack: 1 }],
  spilledBytes: 99,
  blobCount: 1,
  turns: [
    { turn: 1, time: 1, promptTokens: 1000, delta: 1000, compaction: false, spills: [], parts: [{ kind: 'other', label: 'other', tokens: 1000, spilled: false }], drop: null },
    { turn: 2, promptTokens: 5000, delta: 4000, compaction: false, spills: [{ blobId: '/x/a.txt', label: 'Bash ls', bytes: 99 }], parts: [{ kind: 'tool-result', label: 'Bash', tokens: 4000, spilled: true, blobId: '/x/a.txt' }], drop: null },
    { turn: 3, promptTokens: 1000, delta: -4000, compaction: true, spills: [], parts: [], drop: { label: 'compaction', tokens: 4000 } },
  ],
};

describe('message protocol guards', () => {
  it('accepts well-formed host messages', () => {
    expect(isHostToPage({ type: 'chartData', data })).toBe(true);
    expect(isHostToPage({ type: 'error', message: 'gone' })).toBe(true);
  });

  it('rejects malformed chart data field by field', () => {
    const bad: unknown[] = [
      { ...data, turns: 'x' },
      { ...data, contextWindow: Number.NaN },
      { ...data, turns: [{ ...data.turns[0], promptTokens: '1000' }] },
      { ...data, turns: [{ ...data.turns[1], spills: [{ blobId: 1, label: 'x', bytes: 1 }] }] },
      { ...data, turns: [{ ...data.turns[0], compaction: 'no' }] },
      { ...data, title: undefined },
      { ...data, blobCount: '1' },
      { ...data, savedText: 3 },
      { ...data, contributors: [{ turn: 1, tool: 'Bash', tokens: '5', spilled: true }] },
      { ...data, turns: [{ ...data.turns[1], parts: [{ kind: 'file', label: 'x', tokens: 1, spilled: false }] }] },
      { ...data, turns: [{ ...data.turns[2], drop: { label: 'compaction' } }] },
    ];
    for (const d of bad) expect(isChartData(d)).toBe(false);
    expect(isHostToPage({ type: 'chartData' })).toBe(false);
    expect(isHostToPage({ type: 'error' })).toBe(false);
    expect(isHostToPage({ type: 'other' })).toBe(false);
    expect(isHostToPage(null)).toBe(false);
    expect(isHostToPage([])).toBe(false);
  });

  it('checks page messages', () => {
    expect(isPageToHost({ type: 'ready' })).toBe(true);
    expect(isPageToHost({ type: 'revealBlob', blobId: '/a' })).toBe(true);
    expect(isPageToHost({ type: 'revealBlob', blobId: '' })).toBe(false);
    expect(isPageToHost({ type: 'revealBlob' })).toBe(false);
    expect(isPageToHost({ type: 'openTerminal' })).toBe(false);
    expect(isPageToHost('ready')).toBe(false);
  });

  it('survives a JSON round trip (what postMessage does)', () => {
    expect(isHostToPage(JSON.parse(JSON.stringify({ type: 'chartData', data })))).toBe(true);
  });
});
