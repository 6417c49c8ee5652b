// The bounded folder walk: list each folder once, offer it to the sources,
// never follow a symlink, never descend into a folder a claim owns.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { DirListing, SessionClaim, Source } from './source';

/** Folders that never hold spills and can be huge. */
const SKIP_DIRS = new Set(['node_modules', '.git', '.hg', '.svn', '.cache']);

export interface WalkResult {
  claims: SessionClaim[];
  /** Folders that could not be listed, with the error code. */
  unreadable: Array<{ path: string; code: string }>;
}

export function claimKey(claim: SessionClaim): string {
  return `${claim.source}:${claim.dir}`;
}

/** Offer one listing to the sources in order; the first that claims anything wins. */
export function offer(listing: DirListing, sources: readonly Source[]): SessionClaim[] {
  for (const source of sources) {
    const claims = source.claim(listing);
    if (claims.length > 0) return claims;
  }
  return [];
}

/** Walk `start` down to `depth` folder levels below it. */
export async function walk(start: string, depth: number, sources: readonly Source[], skip: (dir: string) => boolean = () => false): Promise<WalkResult> {
  const result: WalkResult = { claims: [], unreadable: [] };
  let level: string[] = [start];
  for (let d = 0; d <= depth && level.length > 0; d++) {
    const next: string[] = [];
    const listings = await Promise.all(
      level.map(async (dir) => {
        try {
          return { path: dir, entries: await fsp.readdir(dir, { withFileTypes: true }) };
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
          if (code !== 'ENOENT' && code !== 'ENOTDIR') result.unreadable.push({ path: dir, code });
          return undefined;
        }
      }),
    );
    for (const listing of listings) {
      if (!listing) continue;
      const claims = offer(listing, sources);
      result.claims.push(...claims);
      const owned = new Set(claims.flatMap((c) => [c.dir, ...c.owns]));
      if (d === depth) continue;
      for (const entry of listing.entries) {
        if (!entry.isDirectory() || SKIP_DIRS.has(entry.name)) continue;
        const child = path.join(listing.path, entry.name);
        if (!owned.has(child) && !skip(child)) next.push(child);
      }
    }
    level = next;
  }
  return result;
}
