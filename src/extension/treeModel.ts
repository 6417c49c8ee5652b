// What the Spills tree shows, computed from catalog data without vscode:
// node ids, labels, descriptions, context values, filtering and sorting. The
// vscode TreeDataProvider (tree.ts) only maps these to TreeItems.

import { SOURCE_LABELS } from '../catalog/sources/names';
import type { BlobInfo, SessionInfo, SourceName } from '../catalog/types';
import { blobCount, compactArgs, formatAge, formatBytes, formatCompact, formatCount, shortId, truncate } from './format';
import { remoteRow, type RemoteNode } from './remoteModel';
import { toolIcon } from './toolKind';

/** VS Code refuses to open files over 50 MB in an editor. */
export const EDITOR_LIMIT_BYTES = 50 * 1024 * 1024;

export type SortOrder = 'time' | 'size';

export interface TreeFilter {
  text?: string;
  tool?: string;
  minBytes?: number;
}

/** How many of a session's blobs the filter shows, and their bytes: what its row says. */
export interface Shown {
  count: number;
  bytes: number;
}

/** A session row carries what it shows, not its blobs: those are listed when it is expanded (100,000 blobs are not sorted to draw 5,000 rows). */
export type SessionNode = { kind: 'session'; session: SessionInfo; shown: Shown };

export type AgentNode = { kind: 'agent'; source: SourceName; sessions: SessionNode[] };
export type BlobNode = { kind: 'blob'; blob: BlobInfo; session: SessionInfo };

/** The last row of an agent or a session whose rows are not all listed: choosing it lists more. */
export type MoreNode = { kind: 'more'; parent: AgentNode | SessionNode; shown: number; total: number };

/** Local rows, and the rows of remote roots (remoteModel.ts). */
export type SpillNode = AgentNode | SessionNode | BlobNode | MoreNode | RemoteNode;

/**
 * How many sessions an agent lists at first, and blobs a session, and how many more each "Show more" row adds.
 * Every session as a row would swell the extension host and make the scroll bar a sliver, and an expanded session
 * reads each shown blob's line count. The filter and the sort by size reach the rest.
 */
export const PAGE = 200;


export function sourceLabel(source: string): string {
  return (SOURCE_LABELS as Record<string, string>)[source] ?? source;
}

/** Stable ids: expansion and selection survive refreshes. */
export function nodeId(node: SpillNode): string {
  switch (node.kind) {
    case 'agent':
      return `agent:${node.source}`;
    case 'session':
      return `session:${node.session.key}`;
    case 'blob':
      return `blob:${node.blob.key}`;
    case 'more':
      return `more:${nodeId(node.parent)}`;
    default:
      return remoteRow(node).id;
  }
}

/**
 * contextValue grammar `spillway:<kind>[+flag...]`, matched in package.json
 * menus with `viewItem =~ /^spillway:blob/` or `/\+big/`.
 */
export function contextValue(node: SpillNode, pinned = false): string {
  switch (node.kind) {
    case 'agent':
      return 'spillway:agent';
    case 'session':
      return `spillway:session${node.session.transcript ? '+chart' : ''}`;
    case 'blob': {
      const flags = [node.blob.bytes > EDITOR_LIMIT_BYTES ? '+big' : '', node.blob.binary ? '+binary' : '', pinned ? '+pinned' : ''];
      return `spillway:blob${flags.join('')}`;
    }
    case 'more':
      return 'spillway:more';
    default:
      return remoteRow(node).contextValue;
  }
}

function baseName(p: string): string {
  const parts = p.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? p;
}

export function sessionLabel(session: SessionInfo): string {
  if (session.title?.trim()) return truncate(session.title, 80);
  if (session.cwd) return baseName(session.cwd);
  return session.id;
}

/**
 * What a blob is: tool and compact args; an unattributed output by its command or its first line when that line
 * says something (a counter's "1" does not: then what kind of output it is and its file's name).
 */
export function blobLabel(blob: BlobInfo): string {
  const args = compactArgs(blob.args ?? '', 60);
  if (blob.tool) return args ? `${blob.tool} ${args}` : blob.tool;
  if (args) return args;
  if (blob.preview === undefined || blob.binary) return blob.kind === 'shell-output' ? 'shell output' : blob.kind === 'hook' ? 'hook output' : blob.name;
  const first = firstLine(blob.preview);
  if (tellsSomething(first)) return truncate(first, 60);
  const stem = blob.name.replace(/\.(txt|log|json)$/i, '');
  return blob.kind === 'shell-output' ? `Bash output ${stem}` : blob.kind === 'hook' ? `hook output ${stem}` : blob.name;
}

function firstLine(text: string): string {
  for (const line of text.split(/\r?\n/)) if (line.trim()) return line.trim();
  return '';
}

/** A line with a word in it (three letters), unlike "1", "----" or "0.00". */
function tellsSomething(line: string): boolean {
  return /\p{L}.*\p{L}.*\p{L}/u.test(line);
}

/** Size and line count: what tells blob rows apart, so the row's label (cut last at a narrow width). */
export function blobFacts(blob: BlobInfo): string {
  const parts = [formatBytes(blob.bytes)];
  if (blob.binary) parts.push('binary');
  else if (blob.lines !== undefined) parts.push(`${formatCount(blob.lines)} lines`);
  return parts.join(' · ');
}

/** A blob row: facts first (label), then what it is (description); a pinned blob says so. */
export function blobRow(blob: BlobInfo, pinned = false): { label: string; description: string } {
  return { label: blobFacts(blob), description: `${pinned ? 'pinned · ' : ''}${blobLabel(blob)}` };
}

/**
 * "3 h ago · 2 blobs · 127 KB": the age of the last change tells sessions with
 * the same title (a prompt repeated) apart.
 */
export function sessionFacts(shown: Shown, updatedAt?: string, now?: number): string {
  const parts = [blobCount(shown.count), formatBytes(shown.bytes)];
  const age = sessionAge(updatedAt, now);
  if (age) parts.unshift(age);
  return parts.join(' · ');
}

/** "3 h ago", or undefined without a usable time (left out rather than shown wrong). */
export function sessionAge(updatedAt?: string, now?: number): string | undefined {
  const then = updatedAt ? Date.parse(updatedAt) : NaN;
  return Number.isFinite(then) && now !== undefined ? formatAge(then, now) : undefined;
}

/**
 * A session row: its age and title (label: what tells it apart, kept by a 300 px side bar and by the row's
 * buttons, which cover its end), then its blob count and size (description).
 */
export function sessionRow(node: SessionNode, now: number, twin = false): { label: string; description: string } {
  return { label: sessionName(node.session, now, twin), description: sessionFacts(node.shown) };
}

/**
 * "43 min ago · fix the build": what tells a session apart from its agent's others, wherever it is listed. A
 * `twin` (another of its agent's sessions reads the same) shows its short id before the title, where a narrow
 * side bar does not cut it: "2 min ago · 178b4d38 · run the build".
 */
export function sessionName(session: SessionInfo, now: number, twin = false): string {
  const age = sessionAge(session.updatedAt, now);
  const title = twin ? `${shortId(session.id)} · ${sessionLabel(session)}` : sessionLabel(session);
  return age ? `${age} · ${title}` : title;
}

/** Keys of the sessions whose name (age and title) another session of the same agent shares. */
export function twinSessions(sessions: readonly SessionInfo[], now: number): Set<string> {
  const byName = new Map<string, string[]>();
  for (const s of sessions) {
    const name = `${s.source}\n${sessionName(s, now)}`;
    byName.set(name, [...(byName.get(name) ?? []), s.key]);
  }
  return new Set([...byName.values()].filter((keys) => keys.length > 1).flat());
}

/**
 * The session row's tooltip as plain-text paragraphs: title, then agent, short
 * id and when it last changed, then size, cwd, the full id and the folder.
 */
export function sessionTooltipParagraphs(session: SessionInfo, now: number): string[] {
  const then = Date.parse(session.updatedAt);
  const when = Number.isFinite(then) ? ` · updated ${formatAge(then, now)} (${new Date(then).toLocaleString()})` : '';
  const paragraphs = [
    sessionLabel(session),
    `${sourceLabel(session.source)} session ${shortId(session.id)}${when}`,
    sessionFacts(shownOf(session, {})),
  ];
  if (session.cwd) paragraphs.push(`cwd: ${session.cwd}`);
  paragraphs.push(`id: ${session.id}`, session.dir);
  if (session.notes.length) paragraphs.push(session.notes.join('\n'));
  return paragraphs;
}

export function agentDescription(sessions: readonly SessionNode[]): string {
  const blobs = sessions.reduce((s, x) => s + x.shown.count, 0);
  const bytes = sessions.reduce((s, x) => s + x.shown.bytes, 0);
  return `${blobCount(blobs)} · ${formatBytes(bytes)}`;
}


export function blobIcon(blob: BlobInfo): string {
  if (blob.kind === 'mcp') return 'plug';
  if (blob.kind === 'hook') return 'zap';
  if (blob.kind === 'shell-output' && !blob.tool) return 'terminal';
  return toolIcon(blob.tool);
}

// ---- filter & sort ----------------------------------------------------------

const SIZE_RE = /^(\d+(?:\.\d+)?)\s*(b|kb?|mb?|gb?)?$/i;

/** "2MB" -> 2097152; undefined when not a size. */
export function parseSize(text: string): number | undefined {
  const m = SIZE_RE.exec(text.trim());
  if (!m) return undefined;
  const unit = (m[2] ?? 'b').toLowerCase()[0];
  const mult = unit === 'k' ? 1024 : unit === 'm' ? 1024 ** 2 : unit === 'g' ? 1024 ** 3 : 1;
  return Math.round(Number(m[1]) * mult);
}

/**
 * One filter line: `tool:Bash`, `>1MB` (or `size:>1MB`), the rest is text
 * matched against label, args, path and session title. Returns an error for a
 * malformed size.
 */
export function parseFilter(input: string): { filter: TreeFilter } | { error: string } {
  const filter: TreeFilter = {};
  const words: string[] = [];
  for (const token of input.trim().split(/\s+/).filter(Boolean)) {
    const tool = /^tool:(.+)$/i.exec(token);
    const size = /^(?:size:)?(?:>=?)(.+)$/i.exec(token);
    if (tool) filter.tool = tool[1];
    else if (size) {
      const bytes = parseSize(size[1] ?? '');
      if (bytes === undefined) return { error: `"${token}" is not a size: use e.g. >100KB or >2MB.` };
      filter.minBytes = bytes;
    } else words.push(token);
  }
  if (words.length) filter.text = words.join(' ');
  return { filter };
}

export function isFilterActive(f: TreeFilter): boolean {
  return Boolean(f.text || f.tool || f.minBytes);
}

export function describeFilter(f: TreeFilter): string {
  const parts: string[] = [];
  if (f.tool) parts.push(`tool:${f.tool}`);
  if (f.minBytes) parts.push(`>${formatBytes(f.minBytes)}`);
  if (f.text) parts.push(`"${f.text}"`);
  return parts.join(' ');
}

export function blobMatches(blob: BlobInfo, session: SessionInfo, f: TreeFilter): boolean {
  if (f.minBytes && blob.bytes < f.minBytes) return false;
  if (f.tool && !(blob.tool ?? blob.kind).toLowerCase().includes(f.tool.toLowerCase())) return false;
  if (f.text) {
    const hay = [blobLabel(blob), blob.path, session.title ?? '', session.cwd ?? ''].join('\n').toLowerCase();
    if (!hay.includes(f.text.toLowerCase())) return false;
  }
  return true;
}

/** Newest first (biggest first when sorting by size, then newest), each time parsed once, not once per comparison. */
function sorted<T>(items: T[], sort: SortOrder, time: (x: T) => string | undefined, bytes: (x: T) => number): T[] {
  const at = new Map(items.map((x) => [x, Date.parse(time(x) ?? '') || 0]));
  return items.sort((a, b) => (sort === 'size' ? bytes(b) - bytes(a) : 0) || at.get(b)! - at.get(a)!);
}

/** Agents (in source order) -> sessions (newest or biggest first) -> blobs, filtered. Empty groups vanish, except sessions with a transcript. */
export function buildTree(sessions: SessionInfo[], filter: TreeFilter, sort: SortOrder): AgentNode[] {
  const bySource = new Map<SourceName, SessionNode[]>();
  for (const session of sessions) {
    const node = sessionNode(session, filter);
    // A session without blobs stays while its transcript does (its chart), unless a filter is on.
    if (node.shown.count === 0 && (isFilterActive(filter) || (session.blobs.length === 0 && !session.transcript))) continue;
    const list = bySource.get(session.source) ?? [];
    list.push(node);
    bySource.set(session.source, list);
  }
  const agents = [...bySource.entries()].map(([source, list]) => ({
    kind: 'agent' as const,
    source,
    sessions: sorted(list, sort, (n) => n.session.updatedAt, (n) => n.session.bytes),
  }));
  return agents.sort((a, b) => sourceLabel(a.source).localeCompare(sourceLabel(b.source)));
}

/** The first `limit` of a parent's rows, then a row that lists more when some are left. */
export function page<T>(parent: MoreNode['parent'], rows: readonly T[], limit: number): Array<T | MoreNode> {
  if (rows.length <= limit) return [...rows];
  return [...rows.slice(0, limit), { kind: 'more', parent, shown: limit, total: rows.length }];
}

/** The "Show more" row: how many the next page adds, then how many of how many are listed (short: a 300 px side bar). */
export function moreRow(node: MoreNode): { label: string; description: string; tooltip: string } {
  const shown = `${formatCount(node.shown)} of ${formatCount(node.total)}`;
  const what = node.parent.kind === 'agent' ? `${sourceLabel(node.parent.source)} sessions` : 'blobs of this session';
  return {
    label: `Show ${formatCount(Math.min(PAGE, node.total - node.shown))} more`,
    description: shown,
    tooltip: `${shown} ${what} listed. Filter the tree or sort it by size to find others.`,
  };
}

/** How many rows to list so that the one at `index` (-1: none) is among them: whole pages, never fewer than `limit`. */
export function limitShowing(index: number, limit: number): number {
  return index < limit ? limit : (Math.floor(index / PAGE) + 1) * PAGE;
}

/** What `filter` shows of a session, counted without listing its blobs. */
export function shownOf(session: SessionInfo, filter: TreeFilter): Shown {
  if (!isFilterActive(filter)) return { count: session.blobs.length, bytes: session.bytes };
  let count = 0;
  let bytes = 0;
  for (const b of session.blobs) {
    if (!blobMatches(b, session, filter)) continue;
    count++;
    bytes += b.bytes;
  }
  return { count, bytes };
}

/** A session's row, as its agent lists it and as its blobs' parent. */
export function sessionNode(session: SessionInfo, filter: TreeFilter): SessionNode {
  return { kind: 'session', session, shown: shownOf(session, filter) };
}

/** A session's blobs that `filter` shows, newest or biggest first: listed only when the session is expanded. */
export function sessionChildren(session: SessionInfo, filter: TreeFilter, sort: SortOrder): BlobInfo[] {
  return sorted(session.blobs.filter((b) => blobMatches(b, session, filter)), sort, (b) => b.createdAt, (b) => b.bytes);
}

// ---- tooltip ----------------------------------------------------------------

/** A Markdown fence longer than any backtick run inside `text`, so the preview cannot close it. */
export function fenceFor(text: string): string {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** Escapes Markdown syntax in a single line of plain text (paths, titles). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~&]/g, (c) => `\\${c}`);
}

export function blobTooltipMarkdown(blob: BlobInfo, session: SessionInfo, preview: string | undefined, previewBytes: number): string {
  const lines = [`**${escapeMarkdown(blobLabel(blob))}**`, ''];
  const facts = [
    `${formatBytes(blob.bytes)}${blob.lines !== undefined ? ` · ${formatCount(blob.lines)} lines` : ''}`,
    `created ${escapeMarkdown(new Date(blob.createdAt).toLocaleString())}`,
    blob.turn !== undefined ? `turn ${blob.turn}` : undefined,
  ].filter(Boolean);
  // One code span: a backtick or a line break in a file name would end it early.
  lines.push(facts.join(' · '), '', `\`${blob.path.replace(/`/g, "'").replace(/\r\n|[\r\n]/g, '\u2424')}\``, '');
  lines.push(`Session: ${escapeMarkdown(sessionLabel(session))} (${escapeMarkdown(sourceLabel(session.source))})`, '');
  if (blob.binary) lines.push('_Binary content: no preview._');
  else if (preview !== undefined) {
    const cut = preview.length > previewBytes ? `${preview.slice(0, previewBytes)}\n…` : preview;
    const fence = fenceFor(cut);
    lines.push(`${fence}text`, cut, fence);
  }
  return lines.join('\n');
}
