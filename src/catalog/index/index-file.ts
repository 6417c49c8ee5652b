// The persistent catalog index: what each claimed session was described as,
// with the stamps (inode, size, mtime) of every folder and file the
// description read. A later process reuses a description whose stamps all
// still hold and re-describes the rest, so unchanged transcripts are never
// parsed again. The file is only a cache: missing, corrupt or from another
// version, it is ignored and rewritten; several processes may write it, each
// to a temporary file renamed into place (the last complete one wins).
import { closeSync, constants as fsConstants, fstatSync, futimesSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, statSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { claimKey, type Described, type SessionClaim } from '../sources/source';
import { blobOrder, sessionJson, type SessionJson } from './session-json';
import type { BlobInfo, KnownRoot } from '../types';
import { childPath, folderHolding } from '../shared/child-path';
import { pauser } from '../shared/pause';
import { isNumberIn, PathTable, storedPaths, type StoredPath } from './path-table';
import { notPrivate, ownedByAnother } from '../../spill/private-folder';

/** Bump when the meaning or layout of a stored description changes: older files are then ignored. */
export const INDEX_VERSION = 13;
const FORMAT = 'spillway-catalog-index';
/**
 * A stamp this close to the scan's start cannot be trusted: a file changed
 * again within the file system's timestamp granularity keeps its mtime.
 */
const RACY_MS = 2000;

/** One session as stored. */
export interface IndexedClaim {
  claim: SessionClaim;
  /** The source's description (without its API calls: `turns` re-reads the transcript); null when the claim holds nothing. */
  described: Omit<Described, 'calls'> | null;
  /**
   * [folder or file path, stamp] as they were when it was described. Pairs,
   * not an object keyed by path: thousands of objects with unique keys each
   * cost the parser a new shape.
   */
  stamps: Array<[string, string]>;
  /** When the stamps were taken (ms since epoch): an mtime this close is not trusted. */
  describedAt: number;
  /**
   * Read from an index: each described blob's folder as stored (one string per folder), undefined for a
   * blob stored by its whole path. A scan keys blobs by folder and name with it, never joining their paths.
   */
  blobFolderOf?: ReadonlyArray<string | undefined>;
}

/**
 * What checking and settling a stored session needs of it: its stamps, and its blobs' paths, sizes and mtimes.
 * Each line keeps these apart, first, so a warm scan parses them alone (a full IndexedClaim has them too).
 */
export interface CheckedClaim {
  claim: SessionClaim;
  stamps: Array<[string, string]>;
  describedAt: number;
  described: {
    session: { dir: string; skipped: number; transcript?: string };
    blobs: ReadonlyArray<{ path: string; name: string; bytes: number; mtimeMs: number }>;
    blobFolders?: string[];
    blobNames?: string;
  } | null;
  blobFolderOf?: ReadonlyArray<string | undefined>;
}

/** `$XDG_CACHE_HOME/spillway`, else `~/.cache/spillway`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(env.HOME || os.homedir(), '.cache');
  return path.join(base, 'spillway');
}

/** The index file of one catalog configuration (roots, depths, sources): the CLI and the extension share it when they agree. */
export function indexFileFor(cacheDir: string, roots: readonly KnownRoot[], sources: readonly string[]): string {
  const config = JSON.stringify([INDEX_VERSION, sources, roots.map((r) => [r.path, r.depth, r.sources, r.files?.source ?? null])]);
  return path.join(cacheDir, `catalog-${fnv1a64(config)}.jsonl`);
}

/**
 * FNV-1a (64 bits, over UTF-16 code units) as 16 hex digits: names an index, which needs no cryptographic hash
 * (every command would load `node:crypto` for it, some 6 ms of its start; two configurations with one name would
 * only share an index, whose every session is still checked against the walk).
 */
function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) hash = BigInt.asUintN(64, (hash ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n);
  return hash.toString(16).padStart(16, '0');
}

/**
 * `ino:size:mtime:ctime` of a path (not followed), or '-' when it does not exist. The ctime, which no one can set,
 * catches a folder whose mtime was put back after a change (`touch -r`, a restore) and a chmod that made it readable.
 */
export function stampOf(file: string): string {
  return stampFrom(statOf(file));
}

/** The stamp of an lstat already made (null: missing, undefined: unreadable), as stampOf() would give it. */
export function stampFrom(stat: Stats | null | undefined): string {
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}` : stat === null ? '-' : '?';
}

/** A stamp no file has: stored for a folder or file that could not be read, so its session is described again. */
export const UNSETTLED = '!';

/**
 * Whether a blob still has the size and mtime it was described with. (Its
 * inode is not compared: blobs are replaced by writing a new file, which
 * gets a new mtime; comparing it would cost a second stat per blob while describing.)
 */
export function blobUnchanged(blob: { path: string; bytes: number; mtimeMs: number }, describedAt: number): boolean {
  if (blob.mtimeMs >= describedAt - RACY_MS) return false;
  const stat = statOf(blob.path);
  return !!stat && stat.isFile() && stat.size === blob.bytes && stat.mtimeMs === blob.mtimeMs;
}

/** Whether every blob of an entry still has the size and mtime it was described with (see blobUnchanged). */
export function blobsUnchanged(entry: CheckedClaim): boolean {
  return (entry.described?.blobs ?? []).every((blob) => blobUnchanged(blob, entry.describedAt));
}

/** Whether a line's two parts agree on what its session's stamps and blobs are (one is checked, the other printed and cleaned). */
function sameStampsAndBlobs(checked: CheckedClaim, entry: IndexedClaim): boolean {
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

/** Whether every stamp of an entry holds (see stampHolds); `now` gives a stamp this scan already took, if it did. */
export function stampsHold(entry: CheckedClaim, now?: (file: string) => string | undefined): boolean {
  return entry.stamps.every(([file, stamp]) => stampHolds(file, stamp, entry.describedAt, now?.(file)));
}

/** Whether an entry line as stored still holds, but for its claim: its stamps and blobs; false when it does not parse. */
export function lineStillHolds(line: Buffer): boolean {
  const entry = parseChecked(line, ANY_CLAIM);
  return !!entry && stampsHold(entry) && blobsUnchanged(entry);
}

/** lstat, synchronous (a stat is cheaper than a promise around one); null when missing, undefined when unreadable. */
function statOf(file: string): Stats | null | undefined {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) ?? null;
  } catch {
    return undefined; // unreadable: never equal to a stored stamp
  }
}

/** Whether a stamp's mtime is too close to when it was taken to prove that nothing changed since. */
function isRacy(stamp: string, takenAt: number): boolean {
  // Its third field (ino:size:mtime:ctime), read in place: asked of every stamp a scan checks, a split made four strings.
  const second = stamp.indexOf(':', stamp.indexOf(':') + 1);
  const mtime = second === -1 ? NaN : Number.parseFloat(stamp.slice(second + 1));
  return Number.isFinite(mtime) && mtime >= takenAt - RACY_MS;
}

/**
 * Whether `file` provably has not changed since `stamp` was taken at `takenAt`: not racy, and stamped the
 * same now (`now`: its stamp as this scan already took it, so it is not stat'ed twice).
 */
export function stampHolds(file: string, stamp: string, takenAt: number, now?: string): boolean {
  return !isRacy(stamp, takenAt) && (now ?? stampOf(file)) === stamp;
}

/** Whether a parsed trailer is this format's, at this version (else the file is not trusted). */
function isCurrentFormat(trailer: unknown): boolean {
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

const EMPTY_INDEX = (): LoadedIndex => ({ entries: new Map(), claims: [], listings: new Map(), walkedAt: 0 });

/**
 * The index's last line: the claims of the entry lines above it (in order,
 * with each line's length in bytes), the blob folders for grep, and the last
 * walk's listings. Last, so a scan can write each session's line as it is
 * settled; with the lengths, one session's line is read without reading the others.
 */
interface Trailer {
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
type StoredClaim = Omit<SessionClaim, 'dir' | 'owns'> & { dir: number; owns: number[] };

/** A trailer read back: its claims and paths as they were written. */
type ReadTrailer = Omit<Trailer, 'paths' | 'claims'> & { paths: string[]; claims: SessionClaim[] };

/** Trailers bigger than this are not trusted (tens of thousands of sessions stay far below). */
const MAX_TRAILER_BYTES = 256 << 20;

/** The trailer of an open index file (found by reading back from its end); undefined when missing, corrupt or of another version. */
function readTrailer(fd: number): { trailer: ReadTrailer; start: number } | undefined {
  const span = lastLineSpan(fd);
  if (!span) return undefined;
  // Read whole in one piece (joining the chunks held it three times over: 120 MB at once for 50,000 sessions).
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
function openIndexFile(file: string): { fd: number; stat: Stats } {
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
function checkIndexFolder(dir: string): void {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st) return;
  const why = st.isDirectory() ? notPrivate(st) : 'is not a folder';
  if (why) throw new Error(`${dir} ${why}`);
}

/**
 * Where the last line of an open index file lies, its '\n' left out; undefined when it is no regular
 * file, or the line is torn (no final '\n') or too long for a trailer.
 */
function lastLineSpan(fd: number): { start: number; end: number } | undefined {
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
function readTrailerHead(fd: number, span: { start: number; end: number }): Pick<Trailer, 'format' | 'version' | 'paths' | 'blobFolders'> | undefined {
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
function absoluteFolders(folders: unknown, paths: readonly string[]): string[] {
  if (!Array.isArray(folders)) return [];
  return folders.flatMap((n) => (isNumberIn(paths, n) && path.isAbsolute(paths[n]!) ? [paths[n]!] : []));
}

const READ_AHEAD_BYTES = 64 << 10;

/** The entry lines of an index file open at `fd`, each read alone (for the reader and for the writer reading back what it wrote). */
abstract class IndexLines {
  /** Each line's claim, start and length in bytes (its '\n' included), in file order. */
  protected readonly lineClaims: SessionClaim[] = [];
  protected readonly offsets: number[] = [];
  protected readonly lengths: number[] = [];
  protected readonly lineUpdated: number[] = [];
  /** The last read, and where in the file it began and how far it reached (a pass in file order reads ahead). */
  private ahead = Buffer.allocUnsafe(0);
  private aheadFrom = 0;
  private aheadBytes = 0;
  /** Where the line a pass read last ends: only the line right after it is worth reading ahead from. */
  private passAt = -1;
  /** Bytes read from the file (for tests that prove what a pass reads). */
  bytesRead = 0;

  protected constructor(protected readonly fd: number) {}

  /** What entry `i` keeps for checking it (see CheckedClaim and entry()). */
  checked(i: number, inOrder = false): CheckedClaim | undefined {
    try {
      return parseChecked(this.read(i, inOrder), this.lineClaims[i]!);
    } catch {
      return undefined;
    }
  }

  /**
   * Entry `i`; undefined when its line is malformed or cannot be read (it is then described again). `inOrder`:
   * one of a pass through the lines in file order, which reads ahead (one read per 64 KB, not one per line).
   */
  entry(i: number, inOrder = false): IndexedClaim | undefined {
    try {
      return parseEntry(this.read(i, inOrder), this.lineClaims[i]!);
    } catch {
      return undefined;
    }
  }

  /**
   * Entry `i`'s session as `list --json` prints it, kept at the end of its line; undefined when the line keeps
   * none (a session without blobs) or cannot be read.
   */
  listed(i: number): SessionJson | undefined {
    try {
      const line = this.read(i);
      const part = partOf(line, 2);
      if (!part) return undefined;
      const [fields, ...blobs] = line.toString('utf8', part.start, part.end).split('\t');
      return { fields: JSON.parse(fields!) as SessionJson['fields'], blobs };
    } catch {
      return undefined;
    }
  }

  /**
   * Entry `i` when its description names the stamps and blobs its checked part does (the scan checked that part;
   * the description is what is printed and cleaned); null when they differ (an edited line), undefined when unreadable.
   */
  entryAsChecked(i: number): IndexedClaim | null | undefined {
    try {
      const line = this.read(i);
      const entry = parseEntry(line, this.lineClaims[i]!);
      const checked = parseChecked(line, this.lineClaims[i]!);
      if (!entry || !checked) return undefined;
      return sameStampsAndBlobs(checked, entry) ? entry : null;
    } catch {
      return undefined;
    }
  }

  /** Entry `i`'s line, in a buffer reused by a later read. */
  protected read(i: number, inOrder = false): Buffer {
    const length = this.lengths[i]!;
    const offset = this.offsets[i]!;
    if (inOrder && offset >= this.aheadFrom && offset + length <= this.aheadFrom + this.aheadBytes) {
      this.passAt = offset + length;
      return this.ahead.subarray(offset - this.aheadFrom, offset - this.aheadFrom + length);
    }
    // Ahead only where the pass goes on in file order: lines settled in another order (a scan's walk need not follow
    // the file) would each read 64 KB for one line of a few KB (at 100,000 blobs, 170 MB read for 18).
    const ahead = inOrder && offset === this.passAt;
    this.passAt = inOrder ? offset + length : -1;
    const size = ahead ? Math.max(length, READ_AHEAD_BYTES) : length;
    if (this.ahead.length < size) this.ahead = Buffer.allocUnsafe(Math.max(size, READ_AHEAD_BYTES));
    const read = readSync(this.fd, this.ahead, 0, size, offset);
    this.bytesRead += read;
    if (read < length) throw new Error('the index was cut short');
    // What was read ahead serves only the same pass: another read may come from a later state of the file.
    this.aheadFrom = offset;
    this.aheadBytes = ahead ? read : 0;
    return this.ahead.subarray(0, length);
  }
}

/**
 * An index file opened for reading: its claims and listings at once, each
 * session's line when asked. The file stays open: a newer index renamed
 * over it meanwhile does not change what is read.
 */
export class IndexReader extends IndexLines {
  /** Whether the trailer records each session's last update. */
  private readonly ordered: boolean;

  private constructor(
    private readonly file: string,
    fd: number,
    trailer: ReadTrailer,
    private header: WalkHeader | undefined,
  ) {
    super(fd);
    let offset = 0;
    const { updated } = trailer;
    this.ordered = Array.isArray(updated) && updated.length === trailer.lengths.length && updated.every((n) => typeof n === 'number' && Number.isFinite(n));
    // Element by element: push(...lengths) overflows the call's arguments past some 130,000 sessions.
    trailer.lengths.forEach((length, i) => {
      this.offsets.push(offset);
      this.lengths.push(length);
      this.lineClaims.push(trailer.claims[i]!);
      this.lineUpdated.push(this.ordered ? updated![i]! : 0);
      offset += length;
    });
  }

  /** Line numbers, the most recently updated session first; undefined when the trailer does not record updates (an older index). */
  newestFirst(): number[] | undefined {
    if (!this.ordered) return undefined;
    return this.lineUpdated.map((_, i) => i).sort((a, b) => this.lineUpdated[b]! - this.lineUpdated[a]! || a - b);
  }

  /** The claims, in the order of their lines. */
  get claims(): readonly SessionClaim[] {
    return this.lineClaims;
  }

  /** Each claim's line, by the claim's key. */
  linesByKey(keyOf: (claim: SessionClaim) => string): Map<string, number> {
    return new Map(this.lineClaims.map((claim, i) => [keyOf(claim), i]));
  }

  /** Undefined when the file is missing, unreadable, corrupt or of another version (it is then rebuilt). */
  static open(file: string): IndexReader | undefined {
    let fd: number | undefined;
    try {
      const opened = openIndexFile(file);
      fd = opened.fd;
      const found = readTrailer(fd);
      if (!found) throw new Error('not an index');
      const { trailer } = found;
      const reader = new IndexReader(file, fd, trailer, listingsOf(trailer));
      markUsed(fd, opened.stat);
      fd = undefined;
      return reader;
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /**
   * The last walk's listings, handed over once (then empty here): a scan needs them only for its walk, and
   * 50,000 sessions' worth is some 30 MB the reader would otherwise hold until closed. (The blob folders are
   * for grep, which reads them alone: blobFoldersIn.)
   */
  takeHeader(): WalkHeader {
    const header = this.header ?? { listings: new Map(), walkedAt: 0 };
    this.header = undefined;
    return header;
  }

  /**
   * The blob folders an index file's trailer names (absolute paths only), read without the rest of it (at
   * 100,000 blobs, some 35 ms of the 150 ms open() takes): where blobs were when it was saved, for ripgrep
   * to start on. Empty when the file is missing, corrupt or of another version.
   */
  static blobFoldersIn(file: string): string[] {
    let fd: number | undefined;
    try {
      fd = openIndexFile(file).fd;
      const span = lastLineSpan(fd);
      const head = span && readTrailerHead(fd, span);
      const paths = head && isCurrentFormat(head) ? storedPaths(head.paths) : undefined;
      return paths ? absoluteFolders(head!.blobFolders, paths) : [];
    } catch {
      return [];
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Where each entry line lies in which file (path, device, inode): enough for another thread to read the same lines. */
  lineSpans(): LineSpans {
    const { dev, ino } = fstatSync(this.fd);
    return { file: this.file, dev, ino, offsets: this.offsets, lengths: this.lengths };
  }

  /** Entry lines. */
  get size(): number {
    return this.claims.length;
  }

  /** Entry `i`'s line as stored (with its '\n'), in a buffer of its own. */
  line(i: number): Buffer {
    return Buffer.from(this.read(i));
  }

  /** Every entry in file order (but those `skip` names, not read), read ahead; stops (returns false) at a malformed one. */
  async forEach(visit: (entry: IndexedClaim) => void, skip?: ReadonlySet<number>): Promise<boolean> {
    // The extension host reads it too: other work gets a turn every few ms.
    const pause = pauser();
    for (let i = 0; i < this.size; i++) {
      if (skip?.has(i)) continue;
      const entry = this.entry(i, true);
      if (!entry) return false;
      visit(entry);
      const turn = pause();
      if (turn) await turn;
    }
    return true;
  }

  close(): void {
    closeSync(this.fd);
  }
}

function listingsOf(trailer: ReadTrailer): WalkHeader {
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

/**
 * Where a line's `n`th part lies (0: what checking needs, 1: the description, 2 to the end: what `list --json`
 * prints); undefined when the line is not whole or has no such part. A line is its parts separated by tabs (JSON
 * has no raw tab) and its newline: a length that does not match its line would still parse, so it must begin
 * with an object and end with the newline.
 */
function partOf(line: Buffer, n: 0 | 1 | 2): { start: number; end: number } | undefined {
  if (line[0] !== 0x7b || line[line.length - 1] !== 0x0a) return undefined;
  const first = line.indexOf(0x09);
  if (first === -1) return undefined;
  if (n === 0) return { start: 0, end: first };
  const second = line.indexOf(0x09, first + 1);
  if (n === 1) return { start: first + 1, end: second === -1 ? line.length - 1 : second };
  return second === -1 ? undefined : { start: second + 1, end: line.length - 1 };
}

function parseChecked(line: Buffer, claim: SessionClaim): CheckedClaim | undefined {
  const part = partOf(line, 0);
  if (!part) return undefined;
  try {
    return toCheckedClaim(JSON.parse(line.toString('utf8', part.start, part.end)), claim);
  } catch {
    return undefined;
  }
}

function parseEntry(line: Buffer, claim: SessionClaim): IndexedClaim | undefined {
  const part = partOf(line, 1);
  if (!part) return undefined;
  try {
    return toIndexedClaim(JSON.parse(line.toString('utf8', part.start, part.end)), claim);
  } catch {
    return undefined;
  }
}

/**
 * The stored sessions (by key) and listings; empty when the file is missing,
 * corrupt or of another version. With `first`, the `first.count` most
 * recently updated sessions (fallback ones excepted: they yield blobs to the
 * others) are read first and handed to `first.show`, then the rest: the top
 * of a tree can be shown before the whole index is read.
 */
export async function loadIndex(
  file: string,
  keyOf: (claim: SessionClaim) => string,
  first?: { count: number; show: (entries: IndexedClaim[]) => void },
): Promise<LoadedIndex> {
  const reader = IndexReader.open(file);
  if (!reader) return EMPTY_INDEX();
  try {
    const entries = new Map<string, IndexedClaim>();
    const early = new Set<number>();
    // A small index is read at once.
    const newest = first && reader.size > first.count ? reader.newestFirst() : undefined;
    if (first && newest) {
      const shown: IndexedClaim[] = [];
      for (const line of newest) {
        if (shown.length >= first.count) break;
        if (reader.claims[line]!.fallback) continue;
        const entry = reader.entry(line);
        if (!entry) return EMPTY_INDEX();
        early.add(line);
        shown.push(entry);
        entries.set(keyOf(entry.claim), entry);
      }
      first.show(shown);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // A torn or foreign file is not trusted at all: one bad line and it is rebuilt.
    if (!(await reader.forEach((entry) => entries.set(keyOf(entry.claim), entry), early))) return EMPTY_INDEX();
    const { listings, walkedAt } = reader.takeHeader();
    return { entries, claims: reader.claims, listings: listings as Map<string, StoredListing>, walkedAt, lines: { spans: reader.lineSpans(), at: reader.linesByKey(keyOf) } };
  } finally {
    reader.close();
  }
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

/** Writing the index failed (a full disk, a lost folder): the caller can still do without it. */
export class IndexWriteError extends Error {}

/** Lines are encoded into a buffer of this size, written when full. */
const FLUSH_BYTES = 256 << 10;
/** The UTF-16 code units of a string encoded at once: at 3 bytes each at most, they fit the buffer. */
const SLICE_UNITS = Math.floor(FLUSH_BYTES / 3);

/**
 * A new index, written to a private temporary file line by line (each
 * session as it is settled), then renamed over the old one by commit() (the
 * last complete one wins). Its lines can be read back while it is written.
 */
export class IndexWriter extends IndexLines {
  /**
   * Each line is encoded here as it is added, and the buffer written when full: a line held as a string until a
   * flush outlived V8's young generation (1 MB in the CLI), so it was copied, then promoted, then collected again.
   */
  private readonly out = Buffer.allocUnsafe(FLUSH_BYTES);
  private used = 0;
  private written = 0;

  private constructor(
    private readonly file: string,
    private readonly temp: string,
    fd: number,
  ) {
    super(fd);
  }

  static async open(file: string): Promise<IndexWriter> {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    checkIndexFolder(path.dirname(file));
    removeLeftovers(path.dirname(file));
    // Named as LEFTOVER_TEMP matches: the index's name, this process's id, a unique tail.
    const temp = `${file}.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}.tmp`;
    const fd = openSync(temp, fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600);
    return new IndexWriter(file, temp, fd);
  }

  /** Add a session's entry; returns its number. */
  add(entry: IndexedClaim): number {
    return this.addLine(entry.claim, encodeEntry(entry), lastUpdate(entry));
  }

  /** Add a line as another index stored it (with its '\n', and its session's last update); returns its number. */
  addLine(claim: SessionClaim, line: string | Buffer, updated: number): number {
    this.lineClaims.push(claim);
    this.lineUpdated.push(updated);
    this.offsets.push(this.written + this.used);
    this.lengths.push(this.append(line));
    return this.lineClaims.length - 1;
  }

  /** A line not yet written is written first (with all before it). */
  protected override read(i: number, inOrder?: boolean): Buffer {
    if (this.offsets[i]! + this.lengths[i]! > this.written) this.flush();
    return super.read(i, inOrder);
  }

  /** Write the trailer and rename the file into place (it stays open for reading; a failed rename leaves it readable, a failed write throws IndexWriteError). */
  async commit(header: IndexHeader): Promise<void> {
    // Each listing's claims by their lines here; one whose claim has none is left out (the folder is listed again).
    const lineOf = new Map(this.lineClaims.map((claim, i) => [claimKey(claim), i]));
    const table = new PathTable();
    const blobFolders = header.blobFolders.map((folder) => table.number(folder));
    const listings = [...header.listings].flatMap(([dir, l]): Trailer['listings'] => {
      const claims = l.claims.map((claim) => lineOf.get(claimKey(claim)));
      return claims.every((line) => line !== undefined) ? [[table.number(dir), l.stamp, claims, l.children.map((child) => table.number(child))]] : [];
    });
    const claims = this.lineClaims.map((claim): StoredClaim => ({ ...claim, dir: table.number(claim.dir), owns: claim.owns.map((owned) => table.number(owned)) }));
    // The paths and blob folders come before walkedAt and all the rest: grep reads them alone (readTrailerHead).
    const trailer: Trailer = { format: FORMAT, version: INDEX_VERSION, savedAt: new Date().toISOString(), paths: table.stored, blobFolders, walkedAt: header.walkedAt, listings, claims, lengths: this.lengths, updated: this.lineUpdated };
    // The same bytes as JSON.stringify(trailer), written a field at a time: the trailer of 50,000 sessions is
    // 40 MB, and whole it was held three times at once (the string, the joined text, the bytes).
    Object.entries(trailer).forEach(([name, value], i) => this.append(`${i === 0 ? '{' : ','}${JSON.stringify(name)}:${JSON.stringify(value)}`));
    this.append('}\n');
    this.flush();
    renameSync(this.temp, this.file);
  }

  /** Close; an uncommitted file is removed. */
  async close(): Promise<void> {
    closeSync(this.fd);
    try {
      unlinkSync(this.temp);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // renamed into place (committed)
    }
  }

  /** Encode `data` after what is buffered; returns its length in bytes. */
  private append(data: string | Buffer): number {
    if (typeof data !== 'string') {
      if (this.used + data.length > this.out.length) this.flush();
      if (data.length > this.out.length) this.write(data); // a line copied from the old index, of MBs
      else this.used += data.copy(this.out, this.used);
      return data.length;
    }
    // A string is encoded a slice at a time: a line of MBs (one session of 100,000 blobs is 53 MB) or a trailer's
    // field is never held twice, as text and as its bytes. A slice never ends between the two halves of a surrogate
    // pair (each half alone would be encoded as U+FFFD).
    let bytes = 0;
    for (let at = 0; at < data.length; ) {
      let end = Math.min(data.length, at + SLICE_UNITS);
      if (end < data.length && isHighSurrogate(data.charCodeAt(end - 1))) end--;
      // A UTF-16 code unit is at most 3 bytes of UTF-8: room for that much, or the buffer is written first.
      if (this.used + (end - at) * 3 > this.out.length) this.flush();
      const n = this.out.write(at === 0 && end === data.length ? data : data.slice(at, end), this.used);
      this.used += n;
      bytes += n;
      at = end;
    }
    return bytes;
  }

  private flush(): void {
    if (this.used === 0) return;
    this.write(this.out.subarray(0, this.used));
    this.used = 0;
  }

  private write(data: Buffer): void {
    try {
      // At most FLUSH_BYTES a call: Linux throttles a process that dirties many pages in one write. Here a 60 MB
      // writeSync took 140-760 ms once some 100 MB were dirty, the same bytes in 256 KB writes 16-17 ms.
      for (let done = 0; done < data.length; ) done += writeSync(this.fd, data, done, Math.min(data.length - done, FLUSH_BYTES), this.written + done);
    } catch (err) {
      throw new IndexWriteError((err as Error).message);
    }
    this.written += data.length;
  }
}

/** The first half of a surrogate pair (U+D800-U+DBFF). */
function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** A temporary index's name (IndexWriter.open): the index's, then its writer's process id and a unique tail. */
const LEFTOVER_TEMP = /^catalog-[0-9a-z-]+\.jsonl\.(\d+)\.[0-9a-z]+\.[0-9a-z]+\.tmp$/;
/** A temporary index written to this recently is left alone: a writer in another PID namespace (a container sharing the home) looks gone from here. */
const LEFTOVER_GRACE_MS = 60_000;
const DAY_MS = 24 * 60 * 60_000;
/** An index's name (indexFileFor). */
const INDEX_NAME = /^catalog-[0-9a-f]{16}\.jsonl$/;
/** An index no run has used for this long is removed: another version's, or one of roots no longer asked for (`--root`). */
const UNUSED_INDEX_MS = 30 * DAY_MS;

/**
 * Removes from `dir` what no run will read again: the temporary indexes of writers that did not finish (Ctrl-C
 * during a first scan of 100,000 blobs left one of tens of MB, and every interrupted run another), once not written
 * to for a minute and their process is gone (or a day old); and indexes unused for a month (each run marks the one it
 * reads: markUsed). Only this user's regular files so named; what cannot be removed stays, and is tried next time.
 */
function removeLeftovers(dir: string, now = Date.now()): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = LEFTOVER_TEMP.exec(name)?.[1];
    if (pid === undefined && !INDEX_NAME.test(name)) continue;
    const file = path.join(dir, name);
    try {
      const st = lstatSync(file, { throwIfNoEntry: false });
      if (!st?.isFile() || ownedByAnother(st)) continue;
      const idle = now - st.mtimeMs;
      const left = pid === undefined ? idle >= UNUSED_INDEX_MS : idle >= LEFTOVER_GRACE_MS && (idle >= DAY_MS || !processRuns(Number(pid)));
      if (left) unlinkSync(file);
    } catch {
      // vanished meanwhile, or not ours to remove
    }
  }
}

/** Marks an index read as used (its mtime, at most daily: not a write per run), so removeLeftovers keeps it; `stat`: as opened. */
function markUsed(fd: number, stat: Stats): void {
  try {
    if (Date.now() - stat.mtimeMs >= DAY_MS) futimesSync(fd, new Date(), new Date());
  } catch {
    // not markable (a read-only cache): then not removable either
  }
}

/** Whether process `pid` runs (one that is not this user's too); when that cannot be told, it is taken to run. */
function processRuns(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Write the index whole (a private temporary file renamed over the old one). */
export async function saveIndex(file: string, entries: Iterable<IndexedClaim>, extra: IndexHeader = { blobFolders: [], listings: new Map(), walkedAt: 0 }): Promise<void> {
  const writer = await IndexWriter.open(file);
  try {
    // The extension saves while it watches: at 100,000 blobs encoding every line at once held its event loop for 0.3-0.5 s.
    const pause = pauser();
    for (const entry of entries) {
      const turn = pause();
      if (turn) await turn;
      writer.add(entry);
    }
    await writer.commit(extra);
  } finally {
    await writer.close();
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
 * objects repeating every key and the full path (the index of 100,000 blobs
 * went from 48 MB to about a third of that). The catalog's own fields and
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
  // The claim's own strings where the line names its folders again: the settled session keeps them, and at 50,000
  // sessions a copy of each folder from every line was 20 MB of the heap.
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
 * V8 shares itself, and 100,000 blobs held 100,000 copies of 'tool-result' (3 MB of the extension's
 * catalog of 74 MB), as they would of an MCP tool's long name. Short values only, and the first few thousand.
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
 * stamps, its description, its claim). Without this, the extension's catalog of 50,000 small sessions held 37 MB more.
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
