// File times as ISO 8601 strings.

/** How far a Date reaches either side of 1970 (ECMAScript: 8.64e15 ms, 275,760 years). */
const DATE_LIMIT_MS = 8.64e15;

/**
 * `ms` as ISO 8601. Some filesystems (tmpfs, btrfs) take any time `touch -d` gives;
 * one past what a Date holds is clamped, so a single odd file cannot stop its session being described.
 */
export function isoTime(ms: number): string {
  return new Date(Math.min(DATE_LIMIT_MS, Math.max(-DATE_LIMIT_MS, Number.isNaN(ms) ? 0 : ms))).toISOString();
}
