import { describe, expect, it } from 'vitest';
import { BudgetTracker, shouldBudgetFlush, shouldDeltaFlush, type ContextUsage } from '../../../src/spill/budget';

const u = (tokens: number | null, contextWindow = 1000): ContextUsage => ({ tokens, contextWindow, percent: tokens == null ? null : (tokens / contextWindow) * 100 });

describe('shouldBudgetFlush', () => {
  it.each([
    [undefined, 0.8, false],
    [u(null), 0.8, false],
    [u(900, 0), 0.8, false],
    [u(900, -5), 0.8, false],
    [u(900), null, false],
    [u(799), 0.8, false],
    [u(800), 0.8, true],
    [u(950), 0.8, true],
  ] as const)('usage %j, threshold %j -> %j', (usage, threshold, want) => {
    expect(shouldBudgetFlush(usage, threshold)).toBe(want);
  });
});

describe('shouldDeltaFlush truth table', () => {
  it.each([
    ['null delta', u(500), 0.1, null, false],
    ['missing usage', undefined, 0.1, 0.15, false],
    ['null tokens', u(null), 0.1, 0.15, false],
    ['zero window', u(500, 0), 0.1, 0.15, false],
    ['no previous fraction', u(500), null, 0.15, false],
    ['below', u(240), 0.1, 0.15, false],
    ['at', u(250), 0.1, 0.15, true],
    ['above', u(600), 0.1, 0.15, true],
    ['shrinking (after compaction)', u(100), 0.7, 0.15, false],
  ] as const)('%s', (_name, usage, previous, delta, want) => {
    expect(shouldDeltaFlush(usage, previous, delta)).toBe(want);
  });
});

describe('BudgetTracker', () => {
  it('fires the delta trigger on a jump, not on the first turn after a reset', () => {
    const t = new BudgetTracker({ delta: 0.15, threshold: 0.9 });
    expect(t.observe(u(500)).delta).toBe(false); // no previous fraction
    expect(t.observe(u(600)).delta).toBe(false);
    expect(t.observe(u(800))).toMatchObject({ delta: true, budget: false, flush: true });
    expect(t.observe(u(950))).toMatchObject({ delta: true, budget: true, flush: true });
    t.reset();
    expect(t.previousFraction).toBeNull();
    expect(t.observe(u(990)).delta).toBe(false);
  });

  it('keeps the previous fraction across a null-token turn', () => {
    const t = new BudgetTracker({ delta: 0.15 });
    t.observe(u(300));
    const nullTurn = t.observe(u(null));
    expect(nullTurn).toMatchObject({ delta: false, budget: false, fraction: null });
    expect(t.previousFraction).toBe(0.3);
    // compared with the last real reading (0.3), not with the null turn
    expect(t.observe(u(460)).delta).toBe(true);
  });

  it('is off when no thresholds are set', () => {
    const t = new BudgetTracker();
    t.observe(u(0));
    expect(t.observe(u(1000))).toMatchObject({ flush: false });
  });
});
