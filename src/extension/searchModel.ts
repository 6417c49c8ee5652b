// What the Search view shows, without vscode: the query (smart case the way
// rg's -S reads it), results grouped session -> blob -> line with the match
// ranges to highlight, and the caps (per blob and in total) that keep one
// blob's 5,000 identical lines from crowding out every other blob, counted so
// the view can say what it left out.

import { compilePattern, effectiveIgnoreCase } from '../catalog/grep/grep';
import type { BlobInfo, GrepMatch, GrepSummary, SessionInfo } from '../catalog/types';
import { formatCount } from './format';

export interface SearchQuery {
  pattern: string;
  regex: boolean;
  /** true: exact case; false: smart case (any case unless the pattern has an upper-case letter). */
  matchCase: boolean;
  /** Session the search was limited to. */
  sessionKey?: string;
}

/** Smart case unless Match Case is on (the grep core's reading of rg's -S). */
export function ignoresCase(q: Pick<SearchQuery, 'pattern' | 'regex' | 'matchCase'>): boolean {
  return effectiveIgnoreCase({ pattern: q.pattern, regex: q.regex, ignoreCase: false, smartCase: !q.matchCase });
}

export function matcherFor(q: SearchQuery): RegExp {
  const re = compilePattern({ pattern: q.pattern, regex: q.regex, ignoreCase: ignoresCase(q) });
  return new RegExp(re.source, `${re.flags.replace('g', '')}g`);
}

/** [start, end) of each match in `text` (an empty match is skipped, never loops). */
export function matchRanges(text: string, re: RegExp): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    out.push([m.index, m.index + m[0].length]);
    if (out.length >= 50) break;
  }
  return out;
}

/**
 * At most this many chars kept before the first match, as VS Code's Search view does: a 300 px side bar shows
 * about 30 chars of a result row, and a log line's timestamp alone is 24.
 */
const LEAD = 12;

/**
 * A result row: `237  …text around the match`, the line number first and the
 * first match no further right than LEAD chars (the context starting at a word),
 * with the highlights shifted to fit.
 */
export function lineRow(match: Pick<GrepMatch, 'line' | 'text'>, re: RegExp): { label: string; highlights: Array<[number, number]> } {
  const raw = match.text;
  const ranges = matchRanges(raw, re);
  const indent = raw.length - raw.trimStart().length;
  const first = ranges[0]?.[0] ?? indent;
  let from = first - indent > LEAD ? first - LEAD : indent;
  // Start the context at a word rather than in the middle of one ("…ash: timeout", not "…0.670Z bash: timeout").
  const word = from > indent ? raw.slice(from, first).search(/\s\S/) : -1;
  if (word >= 0) from += word + 1;
  const cut = from > indent;
  const body = `${cut ? '…' : ''}${raw.slice(from).trimEnd()}`;
  const prefix = `${match.line}  `;
  const shift = prefix.length + (cut ? 1 : 0) - from;
  // A match that starts in the indentation the label leaves out is highlighted from where the text shows.
  const highlights = ranges
    .map(([s, e]): [number, number] => [Math.max(s + shift, prefix.length + (cut ? 1 : 0)), Math.min(e + shift, prefix.length + body.length)])
    .filter(([s, e]) => e > s);
  return { label: prefix + body, highlights };
}

export interface BlobResult {
  blob: BlobInfo;
  /** Matches found in this blob (all of them, shown or not). */
  found: number;
  /** The first ones, up to the per-blob cap and within the total cap. */
  shown: GrepMatch[];
}

export interface SessionResult {
  session: SessionInfo;
  blobs: BlobResult[];
  found: number;
}

export interface SearchCaps {
  perBlob: number;
  total: number;
}

/** Collects matches as they stream in; knows what it left out. */
export class SearchResults {
  readonly sessions: SessionResult[] = [];
  private readonly byBlob = new Map<string, BlobResult>();
  private shownTotal = 0;
  found = 0;

  constructor(
    readonly query: SearchQuery,
    readonly caps: SearchCaps,
    private readonly lookup: (path: string) => { blob: BlobInfo; session: SessionInfo } | undefined,
  ) {}

  add(match: GrepMatch): void {
    let result = this.byBlob.get(match.path);
    if (!result) {
      const found = this.lookup(match.path);
      if (!found) return; // deleted meanwhile
      result = { blob: found.blob, found: 0, shown: [] };
      this.byBlob.set(match.path, result);
      let group = this.sessions.find((s) => s.session.key === found.session.key);
      if (!group) this.sessions.push((group = { session: found.session, blobs: [], found: 0 }));
      group.blobs.push(result);
    }
    result.found++;
    this.found++;
    this.sessions.find((s) => s.session.key === result!.blob.sessionKey)!.found++;
    if (result.shown.length < this.caps.perBlob && this.shownTotal < this.caps.total) {
      result.shown.push(match);
      this.shownTotal++;
    }
  }

  get shown(): number {
    return this.shownTotal;
  }

  get blobCount(): number {
    return this.byBlob.size;
  }

  /** Blobs whose rows stop at the per-blob cap. */
  get blobsCut(): number {
    return [...this.byBlob.values()].filter((b) => b.shown.length < b.found).length;
  }
}

export function caseWords(q: SearchQuery): string {
  const mode = q.matchCase ? 'match case' : ignoresCase(q) ? 'smart case: any case' : 'smart case: exact case';
  return `${q.regex ? 'regex' : 'text'}, ${mode}`;
}

/**
 * The view's message: "5,020 matches in 3 blobs for "error" (text, smart case:
 * any case) · showing 104: at most 50 per blob (1 blob cut)".
 */
export function searchSummary(r: SearchResults, summary: GrepSummary | undefined, running: boolean): string {
  const q = r.query;
  const plural = (n: number, w: string) => `${formatCount(n)} ${w}${n === 1 ? '' : w.endsWith('ch') ? 'es' : 's'}`;
  const head = r.found === 0
    ? `${running ? 'No matches yet' : 'No matches'} for "${q.pattern}" (${caseWords(q)})`
    : `${plural(r.found, 'match')} in ${plural(r.blobCount, 'blob')} for "${q.pattern}" (${caseWords(q)})`;
  const notes: string[] = [];
  if (r.shown < r.found) {
    const why: string[] = [];
    if (r.blobsCut) why.push(`at most ${formatCount(r.caps.perBlob)} per blob (${plural(r.blobsCut, 'blob')} cut)`);
    if (r.shown >= r.caps.total) why.push(`${formatCount(r.caps.total)} in all`);
    notes.push(`showing ${formatCount(r.shown)}: ${why.join(', ')}`);
  }
  if (summary?.truncated) notes.push(`stopped counting at ${formatCount(summary.matches)}`);
  if (summary?.cancelled) notes.push('cancelled');
  if (running) notes.push('searching…');
  return notes.length ? `${head} · ${notes.join(' · ')}` : head;
}
