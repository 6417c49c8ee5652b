// Sessions settled one at a time by a streaming scan (Catalog.scanSessions):
// only what sorts, counts and deduplicates them stays in memory; each
// session's description stays in the index, read back when it is listed.
import * as path from 'node:path';
import { cmp } from '../shared/cmp';
import type { BlobFolderNames, GrepTargets } from '../grep/targets';
import type { CheckedClaim } from '../index/index-file';
import type { SessionClaim } from '../sources/source';
import type { SessionJson } from '../index/session-json';
import type { SessionInfo, TurnSeries } from '../types';
import { isoTime } from '../../spill/iso-time';
import { folderHolding } from '../shared/child-path';

/** Sessions as a one-off command goes through them (see Catalog.scanSessions). */
export interface SessionListing {
  /** Sessions, blobs, their bytes, and lines or files skipped while describing them. */
  sessions: number;
  blobs: number;
  bytes: number;
  skipped: number;
  /** Each session, most recently updated first, read from the index as it is visited (and after what `visit` returns settles). */
  forEach(visit: (session: SessionInfo) => unknown): Promise<void>;
  /** The same as forEach, each session as `list --json` prints it (kept in the index: not described again). */
  forEachJson(visit: (session: SessionJson) => unknown): Promise<void>;
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
  /** Its folder as described, and the folders its blobs were checked in (none when one is known by its path alone). */
  dir?: string;
  folders?: string[];
}

/**
 * Blobs' sizes by folder, then name. Keyed by whole paths, 100,000 blobs cost 100,000 paths joined and
 * hashed (each a string of 100 characters or so); here a folder's string is hashed once for all its blobs.
 */
export class BlobSizes {
  private readonly folders = new Map<string, Map<string, number>>();
  private count = 0;
  /** The folder added to last and its names: a session's blobs come folder by folder (no hash of the path for each). */
  private lastFolder: string | undefined;
  private lastNames: Map<string, number> | undefined;

  /** Blobs held. */
  get size(): number {
    return this.count;
  }

  /** Adds a blob, unless it is here already (then false). */
  add(folder: string, name: string, bytes: number): boolean {
    let names = this.lastFolder === folder ? this.lastNames : this.folders.get(folder);
    if (!names) this.folders.set(folder, (names = new Map()));
    this.lastFolder = folder;
    this.lastNames = names;
    if (names.has(name)) return false;
    names.set(name, bytes);
    this.count++;
    return true;
  }

  /** add() for a blob known by its path. */
  addPath(file: string, bytes: number): boolean {
    return this.add(path.dirname(file), path.basename(file), bytes);
  }

  /** A blob's size; undefined for a file that is none. */
  get(file: string): number | undefined {
    return this.folders.get(path.dirname(file))?.get(path.basename(file));
  }

  /** Each folder holding blobs, with their names and sizes. */
  byFolder(): IterableIterator<[string, ReadonlyMap<string, number>]> {
    return this.folders.entries();
  }
}

/** The settled sessions, with the blobs they list (one session per blob: the first to settle it). */
export class SettledSessions {
  readonly all: Settled[] = [];
  /** Every listed blob's size. */
  readonly blobs = new BlobSizes();
  /** Folders whose every regular file (but manifests; of those named so, when a glob is given) is a blob, of listed sessions. */
  readonly blobFolders: BlobFolderNames = new Map();

  add(entry: CheckedClaim, key: string, line: Settled['line']): void {
    const settled: Settled = { key, claim: entry.claim, line, updatedAt: '', blobs: 0, bytes: 0, skipped: 0 };
    this.all.push(settled);
    const described = entry.described;
    if (!described) return;
    let newest = -Infinity;
    const folderOf = entry.blobFolderOf;
    settled.dir = described.session.dir;
    let folders: Set<string> | undefined = new Set();
    described.blobs.forEach((blob, i) => {
      const folder = folderOf?.[i] ?? folderHolding(blob.path, blob.name);
      if (folder === undefined) folders = undefined;
      else folders?.add(folder);
      // Stored in a folder, a blob's path is its folder and name joined.
      if (!(folder !== undefined ? this.blobs.add(folder, blob.name, blob.bytes) : this.blobs.addPath(blob.path, blob.bytes))) {
        (settled.dropped ??= []).push(i);
        return;
      }
      settled.blobs++;
      settled.bytes += blob.bytes;
      newest = Math.max(newest, blob.mtimeMs);
    });
    if (settled.blobs === 0) return;
    settled.folders = folders && [...folders];
    settled.updatedAt = isoTime(newest);
    settled.skipped = described.session.skipped;
    for (const folder of described.blobFolders ?? []) this.blobFolders.set(folder, described.blobNames);
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
