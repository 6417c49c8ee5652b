// The catalog: every agent's spill sessions -> blobs, kept live.
// A scan walks the known roots once; a session whose folders and files are
// unchanged since the persistent index stored it (cacheDir) is taken from
// there instead of being described again. Afterwards a watched change
// refreshes only the session that owns the changed path (or claims a new folder).

import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { executeClean, planClean } from './clean/clean';
import { removeEmptiedBlobFolders } from './clean/emptyFolders';
import { grep, grepWhileLoading } from './grep/grep';
import { IndexReader } from './index/index-file';
import { readHead } from './read/head';
import { countLines, readSlice, type SliceOptions } from './read/slice';
import { SettledSessions, type SessionListing } from './scan/settled';
import { buildTurnSeries } from './turns/turns';
import type { CleanableSession, CleanExecuteOptions, CleanPlan, CleanRequest, CleanResult, GrepMatch, GrepOptions, GrepProgress, GrepSummary, SliceResult, TurnSeries } from './types';
import { CatalogLive } from './live/catalog-live';
import type { ScanOptions } from './scan/catalog-sessions';
export { mayName, sessionsNamed } from './scan/session-info';
export type { ScanOptions, ScanStats } from './scan/catalog-sessions';

/**
 * Every agent's spill sessions and blobs: scanned (CatalogScan), kept live (CatalogLive), and read, searched,
 * cleaned and charted here.
 */
export class Catalog extends CatalogLive {
  /** Bounded head of a blob (cut at a line boundary) and binary flag; cached on the BlobInfo. */
  async preview(key: string): Promise<{ preview: string; binary: boolean }> {
    const blob = this.blob(key);
    if (blob?.preview !== undefined && blob.binary !== undefined) return { preview: blob.preview, binary: blob.binary };
    const head = await readHead(key, undefined, this.reads.open);
    if (blob) {
      blob.preview = head.preview;
      blob.binary = head.binary;
    }
    return head;
  }

  /** Line count of a file, cached by (size, mtime); also stored on the BlobInfo. */
  async countLines(filePath: string): Promise<number> {
    const lines = await countLines(filePath, this.reads.open);
    const blob = this.blob(filePath);
    if (blob) blob.lines = lines;
    return lines;
  }

  /** Open a file for reading: a regular file with one link, refused below a root when a folder on its way was swapped for a symlink. */
  openForRead(filePath: string): Promise<fsp.FileHandle> {
    return this.reads.open(filePath);
  }

  /** Lines startLine..endLine (1-based, inclusive) of any file, without loading it. */
  readSlice(filePath: string, startLine: number, endLine: number, options?: SliceOptions): Promise<SliceResult> {
    return readSlice(filePath, startLine, endLine, { open: this.reads.open, ...options });
  }

  /**
   * Grep blobs (every blob unless options.paths is given; files with a NUL
   * byte are binary and skipped). ripgrep gets whole blob folders where a
   * layout has them, and only matches in known blobs are reported. When
   * onMatch returns a promise (a slower reader), the search waits for it.
   */
  async grep(
    options: GrepOptions,
    onMatch: (match: GrepMatch) => unknown,
    signal?: AbortSignal,
    onProgress?: (progress: GrepProgress) => void,
  ): Promise<GrepSummary> {
    if (options.paths) return grep({ ...options, paths: options.paths, reads: this.reads }, onMatch, signal, onProgress);
    return grep({ ...options, ...this.grepTargets() }, onMatch, signal, onProgress);
  }

  /**
   * Scan and grep every blob at once: ripgrep starts on the blob folders the
   * index last named while a streaming scan (scanSessions) runs. A match is
   * reported as soon as the scan has settled its file as a blob (matches
   * found before the unchanged sessions are checked wait for that check),
   * else once the scan ends (then the folders it found beyond those are
   * searched). Same results as scan() then grep(); the catalog keeps no sessions.
   */
  async scanAndGrep(
    options: Omit<GrepOptions, 'paths'>,
    onMatch: (match: GrepMatch) => unknown,
    scanOptions: ScanOptions = {},
    signal?: AbortSignal,
  ): Promise<GrepSummary> {
    const settled = new SettledSessions();
    let scanning: Promise<SessionListing> | undefined;
    try {
      return await grepWhileLoading(
        options,
        (withRipgrep, searching) => {
          let checked!: () => void;
          const unchangedChecked = new Promise<void>((resolve) => (checked = resolve));
          // Read at once, synchronously: queued behind the scan's folder reads in the thread pool, ripgrep started most of a second late.
          const early = withRipgrep && this.indexFile ? IndexReader.blobFoldersIn(this.indexFile) : [];
          // The scan starts once ripgrep searches: opening the index beside ripgrep's folders slowed both.
          scanning = searching.then(() => this.scanSessions(scanOptions, { settled, checked }));
          return {
            early: Promise.resolve(early),
            // A settled session's blobs and blob folders are final (regular sessions settle before
            // fallbacks, and the first to name a blob keeps it): its matches are printed at once.
            provisional: unchangedChecked.then(() => (file: string) => settled.blobs.get(file) !== undefined && settled.blobFolders.has(path.dirname(file))),
            targets: scanning.then((l) => l.grepTargets()),
            reads: this.reads,
          };
        },
        onMatch,
        signal,
      );
    } finally {
      // Also when the search failed: the scan ends, and its index is released.
      await scanning?.then((listing) => listing.close(), () => undefined);
    }
  }

  /**
   * What a clean request would delete among `sessions` (nothing is touched):
   * by default the sessions scan() holds; a one-off command passes what it
   * kept of each session from a streaming scan (scanSessions).
   */
  planClean(request: CleanRequest, sessions: readonly CleanableSession[] = this.sessions()): Promise<CleanPlan> {
    return planClean(request, sessions, this.roots);
  }

  /** Delete (or trash) a plan's items after re-checking each; manifests and the catalog follow. */
  async executeClean(plan: CleanPlan, options?: CleanExecuteOptions): Promise<CleanResult> {
    const result = await executeClean(plan, this.roots, options);
    const ownRoots = this.roots.filter((r) => !r.files).map((r) => r.path);
    result.foldersRemoved = await removeEmptiedBlobFolders(result.deleted.map((d) => d.path), ownRoots);
    // A catalog holding no sessions (a streaming scan's) has none to refresh: the index's stamps
    // (the emptied folders changed) make the next scan describe those sessions again.
    if (this.records.size > 0) await this.applyChanges([...result.deleted.map((d) => d.path), ...result.manifestsRewritten, ...result.foldersRemoved]);
    return result;
  }

  /** Per-turn context series of a session, with the tokens-saved estimate. */
  async turnsFor(sessionKey: string): Promise<TurnSeries | undefined> {
    const record = this.records.get(sessionKey);
    if (!record) return undefined;
    // Taken from the index (or scanned without watching): the calls were not kept, so the session is described again (one transcript).
    if (!record.calls) {
      await this.describeOne(record.claim, true);
      const again = this.records.get(sessionKey);
      return again?.calls && buildTurnSeries(sessionKey, again.calls, again.info.blobs, again.info.skipped, again.info.source);
    }
    return buildTurnSeries(sessionKey, record.calls, record.info.blobs, record.info.skipped, record.info.source);
  }

}

