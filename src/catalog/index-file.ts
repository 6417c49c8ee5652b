// The persistent catalog index: what each claimed session was described as,
// with the stamps (inode, size, mtime) of every folder and file the
// description read. A later process reuses a description whose stamps all
// still hold and re-describes the rest, so unchanged transcripts are never
// parsed again. The file is only a cache: missing, corrupt or from another
// version, it is ignored and rewritten; several processes may write it, each
// to a temporary file renamed into place (the last complete one wins).
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, lstatSync, openSync, promises as fsp, readSync, type Stats } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LineReader } from './line-reader';
import type { Described, SessionClaim } from './source';
import type { BlobInfo, KnownRoot } from './types';

/** Bump when the meaning or layout of a stored description changes: older files are then ignored. */
export const INDEX_VERSION = 5;
const FORMAT = 'spillway-catalog-index';
/** One session's line can be big (tens of thousands of blobs), but not this big. */
const MAX_LINE_BYTES = 256 << 20;
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
}

/** `$XDG_CACHE_HOME/spillway`, else `~/.cache/spillway`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(env.HOME || os.homedir(), '.cache');
  return path.join(base, 'spillway');
}

/** The index file of one catalog configuration (roots, depths, sources): the CLI and the extension share it when they agree. */
export function indexFileFor(cacheDir: string, roots: readonly KnownRoot[], sources: readonly string[]): string {
  const config = JSON.stringify([INDEX_VERSION, sources, roots.map((r) => [r.path, r.depth, r.sources, r.files?.source ?? null])]);
  return path.join(cacheDir, `catalog-${createHash('sha256').update(config).digest('hex').slice(0, 16)}.jsonl`);
}

/** `ino:size:mtime` of a path (not followed), or '-' when it does not exist. */
export function stampOf(file: string): string {
  const stat = statOf(file);
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}` : stat === null ? '-' : '?';
}

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
  const mtime = Number(stamp.split(':')[2]);
  return Number.isFinite(mtime) && mtime >= takenAt - RACY_MS;
}

/** Whether `file` provably has not changed since `stamp` was taken at `takenAt`: not racy, and stamped the same now. */
export function stampHolds(file: string, stamp: string, takenAt: number): boolean {
  return !isRacy(stamp, takenAt) && stampOf(file) === stamp;
}

/** Whether a parsed header line is this format's, at this version (else the file is not trusted). */
function isCurrentHeader(header: unknown): boolean {
  const h = header as { format?: unknown; version?: unknown } | null;
  return h?.format === FORMAT && h.version === INDEX_VERSION;
}

/** A folder's listing as the walk used it: its stamp then, the claims it gave (keys), the folders walked below it. */
export interface StoredListing {
  stamp: string;
  claims: string[];
  children: string[];
}

/** What an index file holds: the sessions by claim key, and the last walk's listings. */
export interface LoadedIndex {
  entries: Map<string, IndexedClaim>;
  listings: Map<string, StoredListing>;
  /** When that walk began (ms since epoch): a listing stamp this close is not trusted. */
  walkedAt: number;
}

const EMPTY_INDEX = (): LoadedIndex => ({ entries: new Map(), listings: new Map(), walkedAt: 0 });

/** The stored sessions and listings; empty when the file is missing, corrupt or of another version. */
export async function loadIndex(file: string, keyOf: (claim: SessionClaim) => string): Promise<LoadedIndex> {
  const loaded = EMPTY_INDEX();
  const entries = loaded.entries;
  let header: unknown;
  let valid = true;
  const reader = new LineReader(MAX_LINE_BYTES, (line) => {
    if (!valid || line.length === 0) return;
    try {
      const value = JSON.parse(line.toString('utf8')) as unknown;
      if (header === undefined) {
        header = value;
        valid = isCurrentHeader(value);
        if (valid) readListings(value as { listings?: unknown; walkedAt?: unknown }, loaded);
        return;
      }
      const entry = toIndexedClaim(value);
      if (!entry) throw new Error('malformed entry');
      entries.set(keyOf(entry.claim), entry);
    } catch {
      valid = false;
    }
  });
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
      reader.push(chunk as Buffer);
      if (!valid) break;
    }
    reader.end();
  } catch {
    return EMPTY_INDEX(); // missing or unreadable: rebuilt
  }
  // A torn or foreign file is not trusted at all: one bad line and it is rebuilt.
  return valid && header !== undefined ? loaded : EMPTY_INDEX();
}

/** The header's listings, each [folder, stamp, claim keys, children]; malformed ones are left out (the folder is listed again). */
function readListings(header: { listings?: unknown; walkedAt?: unknown }, into: LoadedIndex): void {
  if (typeof header.walkedAt !== 'number' || !Array.isArray(header.listings)) return;
  into.walkedAt = header.walkedAt;
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
  for (const item of header.listings as unknown[]) {
    if (!Array.isArray(item) || typeof item[0] !== 'string' || typeof item[1] !== 'string' || !strings(item[2]) || !strings(item[3])) continue;
    into.listings.set(item[0], { stamp: item[1], claims: item[2], children: item[3] });
  }
}

/**
 * The blob folders the index's header names (where blobs were when it was
 * saved), read from its first line alone; [] when there is none. grep hands
 * them to ripgrep before the catalog has loaded. Synchronous: queued behind
 * the scan's thousands of folder reads in the thread pool, it started
 * ripgrep most of a second late.
 */
export function readIndexedBlobFolders(file: string): string[] {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const parts: Buffer[] = [];
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (let pos = 0; pos < MAX_LINE_BYTES; ) {
      const bytesRead = readSync(fd, chunk, 0, chunk.length, pos);
      if (bytesRead === 0) return [];
      const nl = chunk.subarray(0, bytesRead).indexOf(0x0a);
      parts.push(Buffer.from(chunk.subarray(0, nl === -1 ? bytesRead : nl)));
      if (nl !== -1) break;
      pos += bytesRead;
    }
    const header = JSON.parse(Buffer.concat(parts).toString('utf8')) as { blobFolders?: unknown };
    const folders = isCurrentHeader(header) ? header.blobFolders : undefined;
    return Array.isArray(folders) ? folders.filter((f): f is string => typeof f === 'string' && path.isAbsolute(f)) : [];
  } catch {
    return []; // missing, unreadable or corrupt: grep waits for the catalog
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** What the header carries besides the format: blob folders for grep, the last walk's listings. */
export interface IndexHeader {
  blobFolders: readonly string[];
  listings: ReadonlyMap<string, StoredListing>;
  walkedAt: number;
}

/** Write the index whole to a private temporary file, then rename it over the old one. */
export async function saveIndex(file: string, entries: Iterable<IndexedClaim>, extra: IndexHeader = { blobFolders: [], listings: new Map(), walkedAt: 0 }): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`;
  const handle = await fsp.open(temp, 'wx', 0o600);
  try {
    const listings = [...extra.listings].map(([dir, l]) => [dir, l.stamp, l.claims, l.children]);
    const header = { format: FORMAT, version: INDEX_VERSION, savedAt: new Date().toISOString(), blobFolders: extra.blobFolders, walkedAt: extra.walkedAt, listings };
    // Lines gathered and joined per MB: appending to one string would build a rope that is slow to write.
    let lines = [JSON.stringify(header) + '\n'];
    let pending = 0;
    for (const entry of entries) {
      const described = entry.described && { ...entry.described, blobs: encodeBlobs(entry.described.blobs) };
      const line = JSON.stringify({ ...entry, described }) + '\n';
      lines.push(line);
      pending += line.length;
      if (pending > 1 << 20) {
        await handle.write(lines.join(''));
        lines = [];
        pending = 0;
      }
    }
    await handle.write(lines.join(''));
    await handle.close();
    await fsp.rename(temp, file);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fsp.rm(temp, { force: true });
    throw err;
  }
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

function encodeBlobs(blobs: readonly StoredBlob[]): StoredBlobs {
  const folders: string[] = [];
  const folderIndex = new Map<string, number>();
  const rows = blobs.map((blob) => {
    const folder = path.dirname(blob.path);
    let index = folderIndex.get(folder);
    if (index === undefined) folderIndex.set(folder, (index = folders.push(folder) - 1));
    // A name that is not the path's last part (never seen, but then the path is kept whole).
    const row: unknown[] = [path.join(folder, blob.name) === blob.path ? index : blob.path];
    for (const field of BLOB_FIELDS) row.push(blob[field] ?? null);
    return row;
  });
  return { folders, rows };
}

/** The stored rows as blob objects (one shape for all: fields always present, undefined when absent); undefined when malformed. */
function decodeBlobs(stored: StoredBlobs): StoredBlob[] | undefined {
  const { folders, rows } = stored;
  if (!Array.isArray(folders) || !Array.isArray(rows) || !folders.every((f) => typeof f === 'string')) return undefined;
  const blobs: StoredBlob[] = [];
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== BLOB_FIELDS.length + 1) return undefined;
    const [where, name, kind, tool, toolCallId, args, bytes, createdAt, mtimeMs, turn, attribution, digestChars, madeBy] = row as [
      number | string, string, StoredBlob['kind'], string | null, string | null, string | null, number, string, number, number | null, StoredBlob['attribution'], number | null, 'spillway' | null,
    ];
    const folder = typeof where === 'number' ? folders[where] : undefined;
    if ((folder === undefined && typeof where !== 'string') || typeof name !== 'string' || typeof bytes !== 'number' || typeof mtimeMs !== 'number') return undefined;
    const blobPath = folder === undefined ? (where as string) : `${folder}${path.sep}${name}`;
    // key and sessionKey are the catalog's (set when installed): present from the start, every blob has one shape.
    const blob: StoredBlob & Pick<BlobInfo, 'key' | 'sessionKey'> = {
      key: blobPath,
      sessionKey: '',
      path: blobPath,
      name,
      kind,
      tool: tool ?? undefined,
      toolCallId: toolCallId ?? undefined,
      args: args ?? undefined,
      bytes,
      createdAt,
      mtimeMs,
      turn: turn ?? undefined,
      attribution,
      digestChars: digestChars ?? undefined,
      madeBy: madeBy ?? undefined,
    };
    blobs.push(blob);
  }
  return blobs;
}

/** A stored line as an IndexedClaim (blobs decoded); undefined when malformed. */
function toIndexedClaim(value: unknown): IndexedClaim | undefined {
  const v = value as Omit<IndexedClaim, 'described'> & { described: (Omit<Described, 'calls' | 'blobs'> & { blobs: StoredBlobs }) | null };
  const valid =
    typeof v === 'object' && v !== null &&
    typeof v.claim?.dir === 'string' && typeof v.claim.source === 'string' && Array.isArray(v.claim.owns) &&
    Array.isArray(v.stamps) && v.stamps.every((p) => Array.isArray(p) && typeof p[0] === 'string' && typeof p[1] === 'string') && typeof v.describedAt === 'number' &&
    (v.described === null || (typeof v.described?.session === 'object' && Array.isArray(v.described.dependsOn) && typeof v.described.blobs === 'object'));
  if (!valid) return undefined;
  if (v.described === null) return { ...v, described: null };
  const blobs = decodeBlobs(v.described.blobs);
  return blobs && { ...v, described: { ...v.described, blobs } };
}
