// The index's last line (format, version, claims, blob folders, the last walk's listings) and the safe
// opening of an index file.

import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import * as path from 'node:path';
import { notPrivate, ownedByAnother } from '../../spill/private-folder';
import { type SessionClaim } from '../sources/source';
import { IndexedClaim } from './claims';
import { isNumberIn, storedPaths, type StoredPath } from './path-table';

/** Bump when the meaning or layout of a stored description changes: older files are then ignored. */
export const INDEX_VERSION = 13;
export const FORMAT = 'spillway-catalog-index';
/** Whether a parsed trailer is this format's, at this version (else the file is not trusted). */
export function isCurrentFormat(trailer: unknown): boolean {
  const h = trailer as { format?: unknown; version?: unknown } | null;
  return h?.format === FORMAT && h.version === INDEX_VERSION;
}

/**
 * A folder's listing as an index stored it: its stamp then, the claims it gave (the numbers of their lines in that
 * index: no key of some 100 characters to parse and hash for each of 5,000 session folders), the folders walked below it.
 */
export interface StoredListing {
  stamp: string;
  claims: number[];
  children: string[];
}

/** A folder's listing as a walk made or recalled it, for the index it writes (which numbers the claims by its lines). */
export interface WalkListing {
  stamp: string;
  claims: readonly SessionClaim[];
  children: string[];
}

/** What an index file holds: the sessions by claim key, and the last walk's listings. */
export interface LoadedIndex {
  entries: Map<string, IndexedClaim>;
  /** Each line's claim, by line number (what listings name). */
  claims: readonly SessionClaim[];
  listings: Map<string, StoredListing>;
  /** When that walk began (ms since epoch): a listing stamp this close is not trusted. */
  walkedAt: number;
  /** Where the entries' lines lie in the file read, and each key's line: for a worker that checks them too (blob-check.ts). */
  lines?: { spans: LineSpans; at: Map<string, number> };
}

/** An index file's entry lines, by start and length, and which file it was (a worker opens it again by path). */
export interface LineSpans {
  file: string;
  dev: number;
  ino: number;
  offsets: number[];
  lengths: number[];
}

export const EMPTY_INDEX = (): LoadedIndex => ({ entries: new Map(), claims: [], listings: new Map(), walkedAt: 0 });

/**
 * The index's last line: the claims of the entry lines above it (in order,
 * with each line's length in bytes), the blob folders for grep, and the last
 * walk's listings. Last, so a scan can write each session's line as it is
 * settled; with the lengths, one session's line is read without reading the others.
 */
export interface Trailer {
  format: string;
  version: number;
  savedAt: string;
  /** Every path named below, each once (path-table.ts); the fields below name paths by their numbers here. */
  paths: StoredPath[];
  blobFolders: number[];
  walkedAt: number;
  /** [folder, stamp, its claims' lines, the folders walked below it] */
  listings: Array<[number, string, number[], number[]]>;
  claims: StoredClaim[];
  lengths: number[];
  /** Each line's session's last update (its newest blob's mtime, ms): the newest can be read first. Optional (0 when absent). */
  updated?: number[];
}

/** A claim as the trailer stores it: its folders by their numbers among the trailer's paths. */
export type StoredClaim = Omit<SessionClaim, 'dir' | 'owns'> & { dir: number; owns: number[] };

/** A trailer read back: its claims and paths as they were written. */
export type ReadTrailer = Omit<Trailer, 'paths' | 'claims'> & { paths: string[]; claims: SessionClaim[] };

/** Trailers bigger than this are not trusted (tens of thousands of sessions stay far below). */
const MAX_TRAILER_BYTES = 256 << 20;

/** The trailer of an open index file (found by reading back from its end); undefined when missing, corrupt or of another version. */
export function readTrailer(fd: number): { trailer: ReadTrailer; start: number } | undefined {
  const span = lastLineSpan(fd);
  if (!span) return undefined;
  // Read whole in one piece (joining chunks would hold it three times over).
  const text = Buffer.allocUnsafe(span.end - span.start);
  if (readSync(fd, text, 0, text.length, span.start) !== text.length) return undefined;
  const trailer = JSON.parse(text.toString('utf8')) as Trailer;
  if (!isCurrentFormat(trailer)) return undefined;
  const { lengths, blobFolders } = trailer;
  const paths = storedPaths(trailer.paths);
  const claims = paths && Array.isArray(trailer.claims) ? trailer.claims.map((c) => claimOf(c, paths)) : [];
  if (!paths || !Array.isArray(lengths) || !Array.isArray(blobFolders) || claims.length !== lengths.length) return undefined;
  if (!claims.every((c): c is SessionClaim => c !== undefined) || !lengths.every((n) => Number.isInteger(n) && n > 0)) return undefined;
  if (lengths.reduce((a, b) => a + b, 0) !== span.start) return undefined;
  return { trailer: { ...trailer, paths, claims }, start: span.start };
}

/** A stored claim with its folders' paths; undefined when malformed or naming a path the trailer does not hold. */
function claimOf(stored: StoredClaim, paths: readonly string[]): SessionClaim | undefined {
  if (typeof stored !== 'object' || stored === null || typeof stored.source !== 'string') return undefined;
  if (!isNumberIn(paths, stored.dir) || !Array.isArray(stored.owns) || !stored.owns.every((n) => isNumberIn(paths, n))) return undefined;
  return { ...stored, dir: paths[stored.dir]!, owns: stored.owns.map((n) => paths[n]!) };
}

/**
 * Opens an index file for reading: never through a symlink, never blocked on a FIFO put in its place, and
 * only this user's file in a folder no one else may write to (else another user could put a crafted one there).
 */
export function openIndexFile(file: string): { fd: number; stat: Stats } {
  checkIndexFolder(path.dirname(file));
  const fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  const stat = fstatSync(fd);
  if (ownedByAnother(stat)) {
    closeSync(fd);
    throw new Error(`${file} is owned by another user`);
  }
  return { fd, stat };
}

/**
 * Throws unless `dir` is a folder to keep the index in: this user's, and no one else may write to it. (A
 * symlink to such a folder is followed: only the user could have put it there.) Another user could otherwise
 * swap the index for one they made, or remove it. A folder not made yet passes (it is made 0700).
 */
export function checkIndexFolder(dir: string): void {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st) return;
  const why = st.isDirectory() ? notPrivate(st) : 'is not a folder';
  if (why) throw new Error(`${dir} ${why}`);
}

/**
 * Where the last line of an open index file lies, its '\n' left out; undefined when it is no regular
 * file, or the line is torn (no final '\n') or too long for a trailer.
 */
export function lastLineSpan(fd: number): { start: number; end: number } | undefined {
  const stat = fstatSync(fd);
  const { size } = stat;
  if (!stat.isFile() || size < 2) return undefined;
  const tail = Buffer.alloc(1);
  if (readSync(fd, tail, 0, 1, size - 1) !== 1 || tail[0] !== 0x0a) return undefined; // torn: the last line never ended
  // The last line starts after the '\n' before it, found reading back a chunk at a time.
  const chunk = Buffer.allocUnsafe(1 << 20);
  let end = size - 1;
  for (;;) {
    if (size - end > MAX_TRAILER_BYTES) return undefined;
    const from = Math.max(0, end - chunk.length);
    if (readSync(fd, chunk, 0, end - from, from) !== end - from) return undefined;
    const nl = chunk.subarray(0, end - from).lastIndexOf(0x0a);
    if (nl !== -1) return { start: from + nl + 1, end: size - 1 };
    if (from === 0) return { start: 0, end: size - 1 }; // one line: the trailer alone
    end = from;
  }
}

/** What ends the trailer's fields up to its blob folders: the next field's name (see readTrailerHead). */
const AFTER_BLOB_FOLDERS = Buffer.from(',"walkedAt":');

/**
 * The trailer's fields up to its blob folders (the paths they name among them), read and parsed alone. They
 * come first (IndexWriter.commit writes the fields in Trailer's order), and no '"' inside a string goes
 * unescaped: the first ',"walkedAt":' is where the next field's name begins.
 */
export function readTrailerHead(fd: number, span: { start: number; end: number }): Pick<Trailer, 'format' | 'version' | 'paths' | 'blobFolders'> | undefined {
  let bytes = Buffer.allocUnsafe(Math.min(64 << 10, span.end - span.start));
  let filled = 0;
  for (;;) {
    const got = readSync(fd, bytes, filled, bytes.length - filled, span.start + filled);
    if (got === 0) return undefined;
    const at = bytes.subarray(0, filled + got).indexOf(AFTER_BLOB_FOLDERS, Math.max(0, filled - AFTER_BLOB_FOLDERS.length));
    filled += got;
    if (at !== -1) return JSON.parse(bytes.toString('utf8', 0, at) + '}') as Trailer;
    if (filled === bytes.length) {
      if (filled >= span.end - span.start) return undefined;
      const more = Buffer.allocUnsafe(Math.min(bytes.length * 2, span.end - span.start));
      bytes.copy(more, 0, 0, filled);
      bytes = more;
    }
  }
}

/** The absolute folder paths among those `folders` numbers (an index's word for them). */
export function absoluteFolders(folders: unknown, paths: readonly string[]): string[] {
  if (!Array.isArray(folders)) return [];
  return folders.flatMap((n) => (isNumberIn(paths, n) && path.isAbsolute(paths[n]!) ? [paths[n]!] : []));
}
export function listingsOf(trailer: ReadTrailer): WalkHeader {
  const listings = new Map<string, StoredListing>();
  if (typeof trailer.walkedAt !== 'number' || !Array.isArray(trailer.listings)) return { listings, walkedAt: 0 };
  const { paths } = trailer;
  const folders = (v: unknown): v is number[] => Array.isArray(v) && v.every((n) => isNumberIn(paths, n));
  const lines = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x) && x >= 0 && x < trailer.claims.length);
  for (const item of trailer.listings as unknown[]) {
    // Malformed ones are left out (the folder is listed again).
    if (!Array.isArray(item) || !isNumberIn(paths, item[0]) || typeof item[1] !== 'string' || !lines(item[2]) || !folders(item[3])) continue;
    listings.set(paths[item[0]]!, { stamp: item[1], claims: item[2], children: item[3].map((n) => paths[n]!) });
  }
  return { listings, walkedAt: trailer.walkedAt };
}
/** What the trailer carries besides the claims: blob folders for grep, the last walk's listings. */
export interface IndexHeader {
  blobFolders: readonly string[];
  listings: ReadonlyMap<string, WalkListing>;
  walkedAt: number;
}

/** What a reader hands a scan for its walk (see takeHeader). */
export interface WalkHeader {
  listings: ReadonlyMap<string, StoredListing>;
  walkedAt: number;
}