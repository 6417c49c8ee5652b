// Small text formatters shared by the tree, tooltips, dialogs and the chart
// header. Pure: no vscode import, so unit tests reach them directly.
import { isoTime } from '../spill/iso-time';

export { formatBytes } from '../common/format-bytes';
import { formatCount } from '../common/format-count';
export { formatCount };
export { compactArgs, truncate } from '../common/one-line';

/** A count as "12.3k" / "1.2M": chart labels, and blob counts a narrow row must keep short. */
export function formatCompact(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1_000_000) return `${(n / 1_000_000).toFixed(abs >= 10_000_000 ? 0 : 1)}M`;
  if (abs >= 1_000) return `${(n / 1_000).toFixed(abs >= 10_000 ? 0 : 1)}k`;
  return String(Math.round(n));
}

/** "3 min ago", "2 h ago", "5 d ago"; absolute date beyond 30 days. */
export function formatAge(then: number, now: number): string {
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 30 * 86_400) return `${Math.floor(s / 86_400)} d ago`;
  return isoTime(then).slice(0, 10);
}

/**
 * A session id short enough to tell sessions apart at a glance, like a short
 * commit hash: a UUID's first 8 hex digits; other long ids cut to 12 chars.
 */
export function shortId(id: string): string {
  const uuid = /^([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.exec(id);
  if (uuid) return uuid[1]!;
  return id.length <= 12 ? id : `${id.slice(0, 12)}…`;
}

/** "1 blob", "2,500 blobs", "100k blobs" (an agent row in a 300 px side bar still shows its size). */
export function blobCount(n: number): string {
  return `${n < 10_000 ? formatCount(n) : formatCompact(n)} blob${n === 1 ? '' : 's'}`;
}

/** "1 session", "3 sessions". */
export function sessionCount(n: number): string {
  return `${formatCount(n)} session${n === 1 ? '' : 's'}`;
}
