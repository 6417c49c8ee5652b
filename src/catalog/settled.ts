// Sessions settled one at a time by a streaming scan (Catalog.scanSessions):
// only what sorts, counts and deduplicates them stays in memory; each
// session's description stays in the index, read back when it is listed.
import type { GrepTargets } from './grep';
import type { IndexedClaim } from './index-file';
import type { SessionClaim } from './source';
import type { SessionInfo, TurnSeries } from './types';

/** Sessions as a one-off command goes through them (see Catalog.scanSessions). */
export interface SessionListing {
  /** Sessions, blobs, their bytes, and lines or files skipped while describing them. */
  sessions: number;
  blobs: number;
  bytes: number;
  skipped: number;
  /** Each session, most recently updated first, read from the index as it is visited (and after what `visit` returns settles). */
  forEach(visit: (session: SessionInfo) => unknown): Promise<void>;
  /** Every listed blob as grep targets. */
  grepTargets(): GrepTargets;
  /** The per-turn series of a session this listing holds (its transcript is read again: calls are not kept). */
  turns(session: SessionInfo): Promise<TurnSeries | undefined>;
  /** Release the index (call once done). */
  close(): Promise<void>;
}

/** One settled session: what it is listed by, and which index line holds its description. */
export interface Settled {
  key: string;
  claim: SessionClaim;
  /** The line: in the index read at the start (`old`), or in the one being written. */
  line: { old: boolean; at: number };
  /** ISO time of its newest listed blob ('' when it lists none: then it is not a session). */
  updatedAt: string;
  blobs: number;
  bytes: number;
  skipped: number;
  /** Positions (among the described blobs) of blobs another session settled first lists. */
  dropped?: number[];
}

/** The settled sessions, with the blobs they list (one session per blob: the first to settle it). */
export class SettledSessions {
  readonly all: Settled[] = [];
  /** Every listed blob's path -> its size. */
  readonly blobs = new Map<string, number>();
  /** Folders whose every regular file (but manifests) is a blob, of listed sessions. */
  readonly blobFolders = new Set<string>();

  add(entry: IndexedClaim, key: string, line: Settled['line']): void {
    const settled: Settled = { key, claim: entry.claim, line, updatedAt: '', blobs: 0, bytes: 0, skipped: 0 };
    this.all.push(settled);
    const described = entry.described;
    if (!described) return;
    let newest = -Infinity;
    described.blobs.forEach((blob, i) => {
      if (this.blobs.has(blob.path)) {
        (settled.dropped ??= []).push(i);
        return;
      }
      this.blobs.set(blob.path, blob.bytes);
      settled.blobs++;
      settled.bytes += blob.bytes;
      newest = Math.max(newest, blob.mtimeMs);
    });
    if (settled.blobs === 0) return;
    settled.updatedAt = new Date(newest).toISOString();
    settled.skipped = described.session.skipped;
    for (const folder of described.blobFolders ?? []) this.blobFolders.add(folder);
  }

  /** Sessions that list a blob, most recently updated first (the order of Catalog.sessions()). */
  listed(): Settled[] {
    return this.all.filter((s) => s.blobs > 0).sort(newestFirst);
  }
}

/** The order sessions are listed in: most recently updated first, then by key. */
export function newestFirst(a: { updatedAt: string; key: string }, b: { updatedAt: string; key: string }): number {
  return cmp(b.updatedAt, a.updatedAt) || cmp(a.key, b.key);
}

/** Code-unit order (ISO timestamps and keys need no locale rules). */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
