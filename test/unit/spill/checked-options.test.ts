// A wrong number from a library caller is refused by name when the policy, hook or extension is made.
import { describe, expect, it } from 'vitest';
import { spillHook } from '../../../src/adapters/agent-sdk';
import { createPiSpillExtension } from '../../../src/adapters/pi-extension';
import { BudgetTracker } from '../../../src/spill/budget';
import { LocalSpillStore } from '../../../src/spill/local-store';
import { createSpillPolicy } from '../../../src/spill/policy';

const store = new LocalSpillStore({ root: '/nonexistent/spillway-never-written' });

describe('library options', () => {
  it.each([-1, -0.5, Number.NaN, '4096', null])('refuses a size of %s, naming the option', (bad) => {
    const size = bad as number;
    expect(() => createSpillPolicy({ store, maxInlineBytes: size })).toThrow(/maxInlineBytes must be a size of 0 or more/);
    expect(() => createSpillPolicy({ store, digestBytes: size })).toThrow(/digestBytes must be a size/);
    expect(() => spillHook({ maxInlineBytes: size })).toThrow(/maxInlineBytes must be a size/);
    expect(() => spillHook({ digestBytes: size })).toThrow(/digestBytes must be a size/);
    expect(() => createPiSpillExtension({ config: { spillThreshold: size } })).toThrow(/config\.spillThreshold must be a size/);
    expect(() => createPiSpillExtension({ config: { spillPreviewBytes: size } })).toThrow(/config\.spillPreviewBytes/);
    expect(() => createPiSpillExtension({ config: { budgetFlushFloor: size } })).toThrow(/config\.budgetFlushFloor/);
  });

  it.each([0, 1, 4096, Number.POSITIVE_INFINITY, undefined])('takes a size of %s', (size) => {
    expect(() => createSpillPolicy({ store, maxInlineBytes: size, digestBytes: size })).not.toThrow();
    expect(() => spillHook({ maxInlineBytes: size, digestBytes: size })).not.toThrow();
    expect(() => createPiSpillExtension({ config: { spillThreshold: size, spillPreviewBytes: size, budgetFlushFloor: size } })).not.toThrow();
  });

  it.each([0, -0.1, 1.5, Number.NaN, '0.2'])('refuses a fraction of %s', (bad) => {
    const fraction = bad as number;
    expect(() => new BudgetTracker({ threshold: fraction })).toThrow(/threshold must be null \(off\) or a fraction in \(0, 1\]/);
    expect(() => new BudgetTracker({ delta: fraction })).toThrow(/delta must be null/);
    expect(() => createPiSpillExtension({ config: { budgetTurnDelta: fraction } })).toThrow(/config\.budgetTurnDelta/);
  });

  it.each([0.15, 1, null, undefined])('takes a fraction of %s', (fraction) => {
    expect(() => new BudgetTracker({ threshold: fraction, delta: fraction })).not.toThrow();
    expect(() => createPiSpillExtension({ config: { budgetTurnDelta: fraction } })).not.toThrow();
  });
});
