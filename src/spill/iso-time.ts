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

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Whether `text` is an ISO 8601 date and time of a real day. `Date.parse` takes more (`"0"` is the year
 * 2000, `"Tuesday 1"` 2001) and rolls impossible days over (February 30 is March 2).
 */
export function isIsoTime(text: string): boolean {
  const m = ISO_DATE_TIME.exec(text);
  if (!m) return false;
  const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return day.getUTCFullYear() === Number(m[1]) && day.getUTCMonth() === Number(m[2]) - 1 && day.getUTCDate() === Number(m[3]) && !Number.isNaN(Date.parse(text));
}
