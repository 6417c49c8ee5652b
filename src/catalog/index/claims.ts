// A session as the index stores it, and the part of it that checking needs.

import { type Described, type SessionClaim } from '../sources/source';

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