// Numbers a caller of the library passes (thresholds, budgets, fractions). A
// wrong one is a programming error: it is refused, by name, when the policy,
// hook or extension is made, instead of spilling every result (a negative
// threshold) or none (NaN) for the rest of the session. (Settings and
// environment variables a user writes fall back to a default instead:
// pi-config.ts, optionsFromEnv.)

/**
 * Throws a RangeError naming the first of `keys` whose value in `options` is not undefined or a number of bytes or
 * chars: 0 or more (Infinity: no limit). Named with `prefix` (`config.`) as the caller wrote it.
 */
export function checkSizes<K extends string>(options: Partial<Record<K, unknown>> | undefined, keys: readonly K[], prefix = ''): void {
  for (const key of keys) {
    const value = options?.[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
      throw new RangeError(`spillway: ${prefix}${key} must be a size of 0 or more, not ${shown(value)}`);
    }
  }
}

/** Whether `value` is a fraction of the context window in (0, 1]. */
export function isFraction(value: unknown): value is number {
  return typeof value === 'number' && value > 0 && value <= 1;
}

/** Throws a RangeError naming `name` unless `value` is undefined, null (off) or a fraction (isFraction). */
export function checkFraction(name: string, value: unknown): void {
  if (value === undefined || value === null || isFraction(value)) return;
  throw new RangeError(`spillway: ${name} must be null (off) or a fraction in (0, 1], not ${shown(value)}`);
}

function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
