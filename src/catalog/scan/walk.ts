// The bounded folder walk: list each folder once, offer it to the sources,
// never follow a symlink, never descend into a folder a claim owns.
import { readdirSync, type Dirent } from 'node:fs';
import * as path from 'node:path';
import type { DirListing, SessionClaim, Source } from '../sources/source';
import { stampOf } from '../index/index-file';
import { childPath } from '../shared/child-path';
import { pauser } from '../shared/pause';
import { isInside } from '../../spill/inside';
import { leftoverClaims } from '../sources/leftovers';

/** Folders that never hold spills and can be huge. */
const SKIP_DIRS = new Set(['node_modules', '.git', '.hg', '.svn', '.cache']);

export interface WalkResult {
  claims: SessionClaim[];
  /** Folders listed (the others were recalled). */
  listed: number;
  /** Folders that could not be listed, with the error code. */
  unreadable: Array<{ path: string; code: string }>;
}

/**
 * Offer one listing to the sources in order; the first that claims anything wins. Temps a killed spill left in
 * it are claimed too, for that source (or, in a folder no source claims, Spillway's when it is offered).
 */
export function offer(listing: DirListing, sources: readonly Source[]): SessionClaim[] {
  for (const source of sources) {
    const claims = source.claim(listing);
    if (claims.length > 0) return [...claims, ...leftoverClaims(listing, source.name)];
  }
  return sources.some((s) => s.name === 'spillway') ? leftoverClaims(listing, 'spillway') : [];
}

/** What one folder's listing gave the walk: its stamp before it was listed, its claims, the folders walked below it. */
export interface Listed {
  stamp: string;
  claims: SessionClaim[];
  children: string[];
}

/** Listings an earlier walk made (the index), and where this walk's are recorded. */
export interface WalkMemo {
  /** What `dir`'s listing gave last time, when `dir` provably has not changed since; undefined: list it. */
  recall(dir: string): Listed | undefined;
  record(dir: string, listed: Listed): void;
}

/**
 * Walk `start` down to `depth` folder levels below it. With a memo, a folder
 * unchanged since the last walk (same inode, size and mtime: no entry added,
 * removed or renamed) is not listed again; its claims and sub-folders are
 * recalled (a stat instead of a listing, for each of thousands of session folders).
 */
export async function walk(start: string, depth: number, sources: readonly Source[], skip: (dir: string) => boolean = () => false, memo?: WalkMemo): Promise<WalkResult> {
  const result: WalkResult = { claims: [], listed: 0, unreadable: [] };
  let level: string[] = [start];
  // Listed one at a time, synchronously, with a yield every few ms: faster than the promise API all at once.
  const pause = pauser();
  const list = (dir: string): { path: string; stamp: string; entries: Dirent[] } | { path: string; recalled: Listed } | undefined => {
    const recalled = memo?.recall(dir);
    if (recalled && namesOnlyWithin(dir, recalled)) return { path: dir, recalled };
    // Stamped before it is listed: a change during the listing leaves a stamp that no longer holds.
    const stamp = memo ? stampOf(dir) : '';
    result.listed++;
    try {
      return { path: dir, stamp, entries: readdirSync(dir, { withFileTypes: true }) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
      if (code !== 'ENOENT' && code !== 'ENOTDIR') result.unreadable.push({ path: dir, code });
      return undefined;
    }
  };
  for (let d = 0; d <= depth && level.length > 0; d++) {
    const next: string[] = [];
    for (const dir of level) {
      await pause();
      const listing = list(dir);
      if (!listing) continue;
      let listed: Listed;
      if ('recalled' in listing) listed = listing.recalled;
      else {
        const claims = offer(listing, sources);
        const owned = new Set(claims.flatMap((c) => [c.dir, ...c.owns]));
        const children: string[] = [];
        if (d < depth) {
          for (const entry of listing.entries) {
            if (!entry.isDirectory() || SKIP_DIRS.has(entry.name)) continue;
            const child = childPath(listing.path, entry.name);
            if (!owned.has(child) && !skip(child)) children.push(child);
          }
        }
        listed = { stamp: listing.stamp, claims, children };
      }
      memo?.record(listing.path, listed);
      // One at a time: spreading a listing of some 130,000 entries into push() overflows the call's arguments.
      for (const claim of listed.claims) result.claims.push(claim);
      for (const child of listed.children) next.push(child);
    }
    level = next;
  }
  return result;
}

/** Whether a stored listing names only what lies in its folder (else it is listed again: an index may have been edited). */
function namesOnlyWithin(dir: string, listed: Listed): boolean {
  return listed.children.every((child) => path.dirname(child) === dir) && listed.claims.every((c) => isInside(dir, c.dir) && c.owns.every((owned) => isInside(dir, owned)));
}
