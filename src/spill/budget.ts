// Budget triggers: pure checks on the context usage an
// agent reports after each turn, plus a tiny tracker for the delta trigger.
import { checkFraction } from './checked-options';

/** What pi's `ctx.getContextUsage()` returns; `tokens` is null right after a compaction. */
export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  /** 0-100, unused here (it is null whenever tokens is). */
  percent?: number | null;
}

/** tokens / contextWindow in 0..1, or null when the usage cannot say. */
export function usageFraction(usage: ContextUsage | undefined): number | null {
  if (!usage || usage.tokens == null || !Number.isFinite(usage.tokens)) return null;
  if (!(usage.contextWindow > 0)) return null;
  return usage.tokens / usage.contextWindow;
}

/** The absolute trigger: the context is at least `threshold` (0..1) full. */
export function shouldBudgetFlush(usage: ContextUsage | undefined, threshold: number | null): boolean {
  const f = usageFraction(usage);
  if (f == null || threshold == null || !Number.isFinite(threshold)) return false;
  return f >= threshold;
}

const FRACTION_EPSILON = 1e-9;

/** The delta trigger: this turn added at least `delta` (0..1) of the window. */
export function shouldDeltaFlush(usage: ContextUsage | undefined, previousFraction: number | null, delta: number | null): boolean {
  const f = usageFraction(usage);
  if (f == null || previousFraction == null || delta == null || !Number.isFinite(delta)) return false;
  // 0.95 - 0.8 is 0.1499999... in floating point: count it as 0.15.
  return f - previousFraction >= delta - FRACTION_EPSILON;
}

export interface BudgetTrackerOptions {
  /** Absolute threshold (0..1); null = off. */
  threshold?: number | null;
  /** Per-turn delta (0..1); null = off. pi-condense suggests 0.15. */
  delta?: number | null;
}

export interface BudgetObservation {
  budget: boolean;
  delta: boolean;
  /** Either trigger fired. */
  flush: boolean;
  /** This turn's fraction, or null when usage was missing. */
  fraction: number | null;
}

/**
 * Feeds the delta trigger its previous fraction. A turn without a reading
 * (null tokens after a compaction) fires nothing and keeps the last known
 * fraction, so the next real reading is compared against it.
 */
export class BudgetTracker {
  private previous: number | null = null;
  private readonly threshold: number | null;
  private readonly delta: number | null;

  constructor(opts: BudgetTrackerOptions = {}) {
    checkFraction('threshold', opts.threshold);
    checkFraction('delta', opts.delta);
    this.threshold = opts.threshold ?? null;
    this.delta = opts.delta ?? null;
  }

  get previousFraction(): number | null {
    return this.previous;
  }

  observe(usage: ContextUsage | undefined): BudgetObservation {
    const fraction = usageFraction(usage);
    const budget = shouldBudgetFlush(usage, this.threshold);
    const delta = shouldDeltaFlush(usage, this.previous, this.delta);
    if (fraction != null) this.previous = fraction;
    return { budget, delta, flush: budget || delta, fraction };
  }

  /** On session start: the first turn after it cannot fire the delta trigger. */
  reset(): void {
    this.previous = null;
  }
}
