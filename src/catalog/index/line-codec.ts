// One session's line in the index: its parts (what checking needs, the description, what `list --json`
// prints), encoded and parsed.

import { childPath, folderHolding } from '../shared/child-path';
import { claimKey, type Described, type SessionClaim } from '../sources/source';
import type { BlobInfo } from '../types';
import { CheckedClaim, IndexedClaim } from './claims';
import { blobOrder, sessionJson } from './session-json';
import { blobsUnchanged, stampsHold } from './stamps';

/** Whether a line's two parts agree on what its session's stamps and blobs are (one is checked, the other printed and cleaned). */
export function sameStampsAndBlobs(checked: CheckedClaim, entry: IndexedClaim): boolean {
  const a = checked.described?.blobs ?? [];
  const b = entry.described?.blobs ?? [];
  return (
    JSON.stringify(checked.stamps) === JSON.stringify(entry.stamps) &&
    a.length === b.length &&
    a.every((blob, i) => blob.path === b[i]!.path && blob.name === b[i]!.name && blob.bytes === b[i]!.bytes && blob.mtimeMs === b[i]!.mtimeMs)
  );
}

/** A claim for parsing a line whose claim is not compared (the rest is). */
const ANY_CLAIM: SessionClaim = { source: 'claude-code', dir: '', owns: [] };
/** Whether an entry line as stored still holds, but for its claim: its stamps and blobs; false when it does not parse. */
export function lineStillHolds(line: Buffer): boolean {
  const entry = parseChecked(line, ANY_CLAIM);
  return !!entry && stampsHold(entry) && blobsUnchanged(entry);
}
/**
 * Where a line's `n`th part lies (0: what checking needs, 1: the description, 2 to the end: what `list --json`
 * prints); undefined when the line is not whole or has no such part. A line is its parts separated by tabs (JSON
 * has no raw tab) and its newline: a length that does not match its line would still parse, so it must begin
 * with an object and end with the newline.
 */
export function partOf(line: Buffer, n: 0 | 1 | 2): { start: number; end: number } | undefined {
  if (line[0] !== 0x7b || line[line.length - 1] !== 0x0a) return undefined;
  const first = line.indexOf(0x09);
  if (first === -1) return undefined;
  if (n === 0) return { start: 0, end: first };
  const second = line.indexOf(0x09, first + 1);
  if (n === 1) return { start: first + 1, end: second === -1 ? line.length - 1 : second };
  return second === -1 ? undefined : { start: second + 1, end: line.length - 1 };
}

export function parseChecked(line: Buffer, claim: SessionClaim): CheckedClaim | undefined {
  const part = partOf(line, 0);
  if (!part) return undefined;
  try {
    return toCheckedClaim(JSON.parse(line.toString('utf8', part.start, part.end)), claim);
  } catch {
    return undefined;
  }
}

export function parseEntry(line: Buffer, claim: SessionClaim): IndexedClaim | undefined {
  const part = partOf(line, 1);
  if (!part) return undefined;
  try {
    return toIndexedClaim(JSON.parse(line.toString('utf8', part.start, part.end)), claim);
  } catch {
    return undefined;
  }
}
/** A session's last update as the catalog shows it: its newest blob's mtime (0 without blobs). */
export function lastUpdate(entry: IndexedClaim): number {
  let newest = 0;
  for (const blob of entry.described?.blobs ?? []) newest = Math.max(newest, blob.mtimeMs);
  return newest;
}

/**
 * One session's line, its parts separated by tabs (JSON holds no raw tab): what checking it needs (its stamps, its
 * blobs' folders, names, sizes and mtimes); its description, the blobs in rows (the claim is in the trailer); then
 * the session as `list --json` prints it: its fields, then each blob.
 */
export function encodeEntry(entry: IndexedClaim): string {
  const d = entry.described;
  const blobs = d && encodeBlobs(d.blobs);
  const described = d && { session: d.session, blobs, dependsOn: d.dependsOn, blobFolders: d.blobFolders, blobNames: d.blobNames };
  const checked: StoredChecked = {
    stamps: entry.stamps,
    describedAt: entry.describedAt,
    described: d && { dir: d.session.dir, skipped: d.session.skipped, transcript: d.session.transcript, folders: blobs!.folders, rows: blobs!.rows.map((row) => CHECKED_COLUMNS.map((column) => row[column])), blobFolders: d.blobFolders, blobNames: d.blobNames },
  };
  const line = `${JSON.stringify(checked)}\t${JSON.stringify({ described, stamps: entry.stamps, describedAt: entry.describedAt })}`;
  if (!d || d.blobs.length === 0) return line + '\n';
  const { source, id, title, cwd, dir } = d.session;
  const listed = sessionJson({ key: claimKey(entry.claim), source, id, title, cwd, dir, bytes: d.blobs.reduce((n, b) => n + b.bytes, 0) }, [...d.blobs].sort(blobOrder));
  return `${line}\t${JSON.stringify(listed.fields)}\t${listed.blobs.join('\t')}\n`;
}

type StoredBlob = Described['blobs'][number];

/**
 * Blobs as stored: their folders once, then one row per blob in BLOB_FIELDS
 * order, absent fields null. Rows of values parse several times faster than
 * objects repeating every key and the full path, and take far less room.
 * The catalog's own fields and
 * lazily read facts (preview, binary, lines) stay out.
 */
interface StoredBlobs {
  folders: string[];
  rows: unknown[][];
}

const BLOB_FIELDS = ['name', 'kind', 'tool', 'toolCallId', 'args', 'bytes', 'createdAt', 'mtimeMs', 'turn', 'attribution', 'digestChars', 'madeBy'] as const satisfies ReadonlyArray<keyof StoredBlob>;

/** A line's first part (see CheckedClaim): each blob as [folder index or whole path, name, bytes, mtimeMs]. */
interface StoredChecked {
  stamps: Array<[string, string]>;
  describedAt: number;
  described: { dir: string; skipped: number; transcript?: string; folders: string[]; rows: unknown[][]; blobFolders?: string[]; blobNames?: string } | null;
}

/** Where a stored row (its folder or path first, then BLOB_FIELDS) holds the name, bytes and mtimeMs checking keeps. */
const CHECKED_COLUMNS = [0, 1 + BLOB_FIELDS.indexOf('name'), 1 + BLOB_FIELDS.indexOf('bytes'), 1 + BLOB_FIELDS.indexOf('mtimeMs')];

function isStamps(v: unknown): v is Array<[string, string]> {
  return Array.isArray(v) && v.every((p) => Array.isArray(p) && typeof p[0] === 'string' && typeof p[1] === 'string');
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** A line's first part as a CheckedClaim; undefined when malformed. */
function toCheckedClaim(value: unknown, claim: SessionClaim): CheckedClaim | undefined {
  const v = value as StoredChecked;
  if (typeof v !== 'object' || v === null || !isStamps(v.stamps) || typeof v.describedAt !== 'number') return undefined;
  const d = v.described;
  if (d === null) return { claim, stamps: v.stamps, describedAt: v.describedAt, described: null };
  if (typeof d !== 'object' || typeof d.dir !== 'string' || typeof d.skipped !== 'number' || !(d.transcript === undefined || typeof d.transcript === 'string') || !isStrings(d.folders) || !Array.isArray(d.rows)) return undefined;
  if (!(d.blobFolders === undefined || isStrings(d.blobFolders)) || !(d.blobNames === undefined || typeof d.blobNames === 'string')) return undefined;
  // The claim's own strings where the line names its folders again: the settled session keeps them, not a copy
  // of each folder from every line.
  const own = (p: string): string => (p === claim.dir ? claim.dir : (claim.owns.find((owned) => owned === p) ?? p));
  const folders = d.folders.map(own);
  const blobs: Array<{ path: string; name: string; bytes: number; mtimeMs: number }> = [];
  const folderOf: Array<string | undefined> = [];
  for (const row of d.rows) {
    if (!Array.isArray(row) || row.length !== 4) return undefined;
    const [where, name, bytes, mtimeMs] = row as [unknown, unknown, unknown, unknown];
    const folder = typeof where === 'number' ? folders[where] : undefined;
    if ((folder === undefined && typeof where !== 'string') || typeof name !== 'string' || typeof bytes !== 'number' || typeof mtimeMs !== 'number') return undefined;
    blobs.push({ path: folder === undefined ? (where as string) : childPath(folder, name), name, bytes, mtimeMs });
    folderOf.push(folder);
  }
  const session = { dir: own(d.dir), skipped: d.skipped, transcript: d.transcript };
  return { claim, stamps: v.stamps, describedAt: v.describedAt, described: { session, blobs, blobFolders: d.blobFolders?.map(own), blobNames: d.blobNames }, blobFolderOf: folderOf };
}

function encodeBlobs(blobs: readonly StoredBlob[]): StoredBlobs {
  const folders: string[] = [];
  const folderIndex = new Map<string, number>();
  const rows = blobs.map((blob) => {
    // Stored by folder only when decodeBlobs joins it back to the same path; otherwise (a name that is not the
    // path's last part, never seen) the path is kept whole. Not path.join, which normalizes, at a cost per blob.
    const folder = folderHolding(blob.path, blob.name);
    let index: number | undefined;
    if (folder !== undefined) {
      index = folderIndex.get(folder);
      if (index === undefined) folderIndex.set(folder, (index = folders.push(folder) - 1));
    }
    const row: unknown[] = [index ?? blob.path];
    for (const field of BLOB_FIELDS) row.push(blob[field] ?? null);
    return row;
  });
  return { folders, rows };
}

/**
 * The stored rows as blob objects (one shape for all: fields always present, undefined when absent), and
 * each one's folder as stored (see IndexedClaim.blobFolderOf); undefined when malformed.
 */
function decodeBlobs(stored: StoredBlobs): { blobs: StoredBlob[]; folderOf: Array<string | undefined> } | undefined {
  const { folders, rows } = stored;
  if (!Array.isArray(folders) || !Array.isArray(rows) || !folders.every((f) => typeof f === 'string')) return undefined;
  const blobs: StoredBlob[] = [];
  const folderOf: Array<string | undefined> = [];
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== BLOB_FIELDS.length + 1) return undefined;
    const [where, name, kind, tool, toolCallId, args, bytes, createdAt, mtimeMs, turn, attribution, digestChars, madeBy] = row as [
      number | string, string, StoredBlob['kind'], string | null, string | null, string | null, number, string, number, number | null, StoredBlob['attribution'], number | null, 'spillway' | null,
    ];
    const folder = typeof where === 'number' ? folders[where] : undefined;
    if ((folder === undefined && typeof where !== 'string') || typeof name !== 'string' || typeof bytes !== 'number' || typeof mtimeMs !== 'number') return undefined;
    if (typeof kind !== 'string' || typeof createdAt !== 'string' || typeof attribution !== 'string' || !nullOr(tool, 'string') || !nullOr(toolCallId, 'string') || !nullOr(args, 'string') || !nullOr(turn, 'number') || !nullOr(digestChars, 'number')) return undefined;
    const blobPath = folder === undefined ? (where as string) : childPath(folder, name);
    // key and sessionKey are the catalog's (set when installed): present from the start, every blob has one shape.
    const blob: StoredBlob & Pick<BlobInfo, 'key' | 'sessionKey'> = {
      key: blobPath,
      sessionKey: '',
      path: blobPath,
      name,
      kind: shared(kind),
      tool: tool === null ? undefined : shared(tool),
      toolCallId: toolCallId ?? undefined,
      args: args ?? undefined,
      bytes,
      createdAt,
      mtimeMs,
      turn: turn ?? undefined,
      attribution: shared(attribution),
      digestChars: digestChars ?? undefined,
      madeBy: madeBy ?? undefined,
    };
    blobs.push(blob);
    folderOf.push(folder);
  }
  return { blobs, folderOf };
}

function nullOr(value: unknown, type: 'string' | 'number'): boolean {
  return value === null || typeof value === type;
}

/** The few values that repeat across blobs (kinds, tools, attributions), one string each. */
const sharedValues = new Map<string, string>();

/**
 * `value`, as the string kept for it: JSON.parse makes a string of every occurrence longer than the few
 * V8 shares itself, so every blob would hold its own copy of 'tool-result' or an MCP tool's long name.
 * Short values only, and the first few thousand.
 */
function shared<T extends string>(value: T): T {
  if (typeof value !== 'string' || value.length > 64) return value;
  const known = sharedValues.get(value);
  if (known !== undefined) return known as T;
  if (sharedValues.size < 4096) sharedValues.set(value, value);
  return value;
}

/**
 * One string for each path a line names, the claim's where they are the same: JSON.parse makes a string of
 * every occurrence, and a session's folder, transcript and blob folder each occur three to five times (its
 * stamps, its description, its claim).
 */
function sharePaths(v: { stamps: Array<[string, string]>; described: { session: { dir: string; transcript?: string }; dependsOn: string[]; blobFolders?: string[]; blobs: StoredBlobs } | null }, claim: SessionClaim): void {
  const seen = new Map<string, string>();
  const one = (p: string): string => {
    const known = seen.get(p);
    if (known !== undefined) return known;
    seen.set(p, p);
    return p;
  };
  const each = (list: unknown): void => {
    if (Array.isArray(list)) for (let i = 0; i < list.length; i++) if (typeof list[i] === 'string') list[i] = one(list[i]);
  };
  one(claim.dir);
  each(claim.owns);
  for (const pair of v.stamps) pair[0] = one(pair[0]);
  const d = v.described;
  if (!d) return;
  if (typeof d.session.dir === 'string') d.session.dir = one(d.session.dir);
  if (typeof d.session.transcript === 'string') d.session.transcript = one(d.session.transcript);
  each(d.dependsOn);
  each(d.blobFolders);
  each(d.blobs.folders);
}

/** A stored line (its claim from the trailer) as an IndexedClaim, blobs decoded; undefined when malformed. */
/** Whether a stored session has the types a listing prints (an edited line could hold an object for a title). */
function isStoredSession(value: unknown): boolean {
  const s = value as Record<string, unknown> | null;
  const optionalString = (v: unknown): boolean => v === undefined || v === null || typeof v === 'string';
  return (
    typeof s === 'object' && s !== null &&
    typeof s.source === 'string' && typeof s.id === 'string' && typeof s.dir === 'string' && typeof s.skipped === 'number' &&
    optionalString(s.title) && optionalString(s.cwd) && optionalString(s.transcript) &&
    Array.isArray(s.notes) && s.notes.every((n) => typeof n === 'string')
  );
}

function toIndexedClaim(value: unknown, claim: SessionClaim): IndexedClaim | undefined {
  const v = value as Omit<IndexedClaim, 'described' | 'claim'> & { described: (Omit<Described, 'calls' | 'blobs'> & { blobs: StoredBlobs }) | null };
  const valid =
    typeof v === 'object' && v !== null &&
    Array.isArray(v.stamps) && v.stamps.every((p) => Array.isArray(p) && typeof p[0] === 'string' && typeof p[1] === 'string') && typeof v.describedAt === 'number' &&
    (v.described === null || (isStoredSession(v.described?.session) && Array.isArray(v.described.dependsOn) && typeof v.described.blobs === 'object'));
  if (!valid) return undefined;
  sharePaths(v, claim);
  if (v.described === null) return { claim, stamps: v.stamps, describedAt: v.describedAt, described: null };
  const decoded = decodeBlobs(v.described.blobs);
  if (!decoded) return undefined;
  // Field by field: spreading an object JSON.parse made takes V8's slow path (see sessionInfo in catalog.ts).
  const { session, dependsOn, blobFolders } = v.described;
  const blobNames = typeof v.described.blobNames === 'string' ? v.described.blobNames : undefined;
  return { claim, stamps: v.stamps, describedAt: v.describedAt, described: { session, blobs: decoded.blobs, dependsOn, blobFolders, blobNames }, blobFolderOf: decoded.folderOf };
}