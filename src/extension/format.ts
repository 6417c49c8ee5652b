// Small text formatters shared by the tree, tooltips, dialogs and the chart
// header. Pure: no vscode import, so unit tests reach them directly.
import { isoTime } from '../spill/iso-time';

export { formatBytes } from '../common/format-bytes';

/** 12345 -> "12,345" (locale-independent so tests and screenshots agree). */
export function formatCount(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

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

/** Collapses whitespace and cuts to `max` chars with an ellipsis. */
export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let end = Math.max(0, max - 1);
  // Never between the two halves of a character outside the BMP (an emoji): a lone half shows as �.
  if (end > 0 && /[\ud800-\udbff]/.test(flat[end - 1]!)) end--;
  return `${flat.slice(0, end)}…`;
}

// Keys whose value best describes a call, most telling first.
const TELLING_KEYS = ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'prompt', 'description'];

/** The args of a tool call as one short line: `npm test`, `src/a.ts`, `{"k":1}`. */
export function compactArgs(args: unknown, max = 60): string {
  if (args === undefined || args === null) return '';
  if (typeof args === 'string') return truncate(args, max);
  if (typeof args !== 'object') return truncate(String(args), max);
  const record = args as Record<string, unknown>;
  for (const key of TELLING_KEYS) {
    const v = record[key];
    if (typeof v === 'string' && v.trim()) return truncate(v, max);
  }
  let json: string;
  try {
    json = JSON.stringify(args);
  } catch {
    return '';
  }
  return json === '{}' ? '' : truncate(json, max);
}
