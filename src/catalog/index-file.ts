// The persistent catalog index: what each claimed session was described as,
// with the stamps (inode, size, mtime) of every folder and file the
// description read. A later process reuses a description whose stamps all
// still hold and re-describes the rest, so unchanged transcripts are never
// parsed again. The file is only a cache: missing, corrupt or from another
// version, it is ignored and rewritten; several processes may write it, each
// to a temporary file renamed into place (the last complete one wins).
import { createHash } from 'node:crypto';
import { createReadStream, lstatSync, promises as fsp, type Stats } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LineReader } from './line-reader';
import type { Described, SessionClaim } from './source';
import type { BlobInfo, KnownRoot } from './types';

/** Bump when the meaning of a stored description changes: older files are then ignored. */
export const INDEX_VERSION = 2;
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
  /** Folder or file path -> stamp, as they were when it was described. */
  stamps: Record<string, string>;
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
export function isRacy(stamp: string, takenAt: number): boolean {
  const mtime = Number(stamp.split(':')[2]);
  return Number.isFinite(mtime) && mtime >= takenAt - RACY_MS;
}

/** The stored sessions by claim key; empty when the file is missing, corrupt or of another version. */
export async function loadIndex(file: string, keyOf: (claim: SessionClaim) => string): Promise<Map<string, IndexedClaim>> {
  const entries = new Map<string, IndexedClaim>();
  let header: unknown;
  let valid = true;
  const reader = new LineReader(MAX_LINE_BYTES, (line) => {
    if (!valid || line.length === 0) return;
    try {
      const value = JSON.parse(line.toString('utf8')) as unknown;
      if (header === undefined) {
        header = value;
        const h = value as { format?: unknown; version?: unknown };
        valid = h?.format === FORMAT && h.version === INDEX_VERSION;
        return;
      }
      if (!isIndexedClaim(value)) throw new Error('malformed entry');
      entries.set(keyOf(value.claim), value);
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
    return new Map(); // missing or unreadable: rebuilt
  }
  // A torn or foreign file is not trusted at all: one bad line and it is rebuilt.
  return valid && header !== undefined ? entries : new Map();
}

/**
 * The blob folders the index's header names (where blobs were when it was
 * saved), read from its first line alone; [] when there is none. grep hands
 * them to ripgrep before the catalog has loaded.
 */
export async function readIndexedBlobFolders(file: string): Promise<string[]> {
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(file, 'r');
    const parts: Buffer[] = [];
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (let pos = 0, total = 0; total < MAX_LINE_BYTES; ) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, pos);
      if (bytesRead === 0) return [];
      const nl = chunk.subarray(0, bytesRead).indexOf(0x0a);
      parts.push(Buffer.from(chunk.subarray(0, nl === -1 ? bytesRead : nl)));
      if (nl !== -1) break;
      pos += bytesRead;
      total += bytesRead;
    }
    const header = JSON.parse(Buffer.concat(parts).toString('utf8')) as { format?: unknown; version?: unknown; blobFolders?: unknown };
    const folders = header.format === FORMAT && header.version === INDEX_VERSION ? header.blobFolders : undefined;
    return Array.isArray(folders) ? folders.filter((f): f is string => typeof f === 'string' && path.isAbsolute(f)) : [];
  } catch {
    return []; // missing, unreadable or corrupt: grep waits for the catalog
  } finally {
    await handle?.close();
  }
}

/** Write the index whole to a private temporary file, then rename it over the old one; the header names the blob folders. */
export async function saveIndex(file: string, entries: Iterable<IndexedClaim>, blobFolders: readonly string[] = []): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`;
  const handle = await fsp.open(temp, 'wx', 0o600);
  try {
    // Lines gathered and joined per MB: appending to one string would build a rope that is slow to write.
    let lines = [JSON.stringify({ format: FORMAT, version: INDEX_VERSION, savedAt: new Date().toISOString(), blobFolders }) + '\n'];
    let pending = 0;
    for (const entry of entries) {
      const described = entry.described && { ...entry.described, blobs: entry.described.blobs.map(storedBlob) };
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

/** Blobs are stored as described: the catalog's own fields and lazily read facts stay out. */
function storedBlob(blob: StoredBlob): StoredBlob {
  const { key: _key, sessionKey: _session, preview: _preview, binary: _binary, lines: _lines, ...stored } = blob as BlobInfo;
  return stored;
}

function isIndexedClaim(value: unknown): value is IndexedClaim {
  const v = value as IndexedClaim;
  return (
    typeof v === 'object' && v !== null &&
    typeof v.claim?.dir === 'string' && typeof v.claim.source === 'string' && Array.isArray(v.claim.owns) &&
    typeof v.stamps === 'object' && v.stamps !== null && typeof v.describedAt === 'number' &&
    (v.described === null ||
      (typeof v.described?.session === 'object' && Array.isArray(v.described.blobs) && Array.isArray(v.described.dependsOn) &&
        v.described.blobs.every((b) => typeof b?.path === 'string' && typeof b.bytes === 'number' && typeof b.mtimeMs === 'number')))
  );
}
