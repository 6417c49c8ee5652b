// Scanning: the walk of the roots checked against the index, the sessions described anew (with worker threads
// when worth it), the streaming scan that keeps sessions in the index, and the first paint from the index.

import { lstatSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { type GrepTargets } from '../grep/grep';
import { blobsUnchanged, IndexReader, IndexWriteError, IndexWriter, loadIndex, stampHolds, stampsHold, type CheckedClaim, type IndexedClaim, type LineSpans, type LoadedIndex, type StoredListing, type WalkListing } from '../index/index-file';
import { listedAsChecked, type SessionJson } from '../index/session-json';
import { folderId, notAFolder } from '../shared/folder-id';
import { pauser } from '../shared/pause';
import { claimKey, type SessionClaim } from '../sources/source';
import { buildTurnSeries } from '../turns/turns';
import type { SessionInfo, TurnSeries } from '../types';
import { BlobCheck, DEFAULT_BLOB_CHECK_WORKER } from './blob-check';
import { grepTargetsOf, wholeFolders } from '../grep/blob-targets';
import { CatalogSessions, pacer, type ScanOptions, type ScanStats, type WalkedStamps } from './catalog-sessions';
import { infoJson, ownBlob, sessionInfo, visitInTurn } from './session-info';
import { claimFolders } from './describe';
import { DEFAULT_DESCRIBE_WORKER, DESCRIBE_AHEAD_WALK_MS, DescribeAhead, startWaiting, worthAWorker, type KeepLine, type WaitingWorker } from './describe-ahead';
import { SettledSessions, type SessionListing, type Settled } from './settled';
import { walk, type Listed, type WalkMemo } from './walk';

/**
 * Sessions described at once. Four keep the cold scan as fast as sixteen did
 * (the work is mostly on this thread) and its peak memory lower: each session in flight holds its parsed transcript.
 */
const DESCRIBE_CONCURRENCY = 4;
/** Sessions showIndexed() shows before it reads the rest of the index: more than a side bar's height of rows. */
const FIRST_SHOWN = 200;
/** What a streaming scan reports while it runs: the sessions settled so far, and when the unchanged regular ones are (grep prints their matches then). */
interface SettleProgress {
  settled: SettledSessions;
  checked: () => void;
}
/** `here`, or with a check-ahead worker its verdict on line `at` (the line checked by `here` when the worker has not taken it). */
function checkedBy<E extends CheckedClaim>(ahead: BlobCheck | undefined, at: number | undefined, here: (entry: E) => boolean): (entry: E) => boolean {
  return ahead && at !== undefined ? (e) => ahead.unchanged(at, () => here(e)) : here;
}

/** Whether an entry's stamps hold (a folder this scan's walk stamped is not stat'ed again) and, with statBlobs, its blobs. */
function entryUnchanged(entry: CheckedClaim, walked: WalkedStamps | undefined, statBlobs: boolean): boolean {
  return stampsHold(entry, (file) => walked?.get(file)?.stamp) && (!statBlobs || blobsUnchanged(entry));
}
/** A listing of sessions already in memory (a catalog without an index to write). */
function listingOf(sessions: SessionInfo[], targets: GrepTargets, turns: SessionListing['turns']): SessionListing {
  return {
    sessions: sessions.length,
    blobs: sessions.reduce((n, s) => n + s.blobs.length, 0),
    bytes: sessions.reduce((n, s) => n + s.bytes, 0),
    skipped: sessions.reduce((n, s) => n + s.skipped, 0),
    forEach: (visit) => visitInTurn(sessions, visit),
    forEachJson: (visit) => visitInTurn(sessions, (s) => visit(infoJson(s))),
    grepTargets: () => targets,
    turns,
    close: async () => undefined,
  };
}
/** The last walk's listings as an index stored them, and the claims they name. */
interface StoredListings {
  listings: ReadonlyMap<string, StoredListing>;
  walkedAt: number;
  /** The claim of the index's line `line` (what a listing names). */
  claimAt(line: number): SessionClaim | undefined;
}

/**
 * The walk's memory of the last walk's listings (from the index): a folder is
 * recalled only when its stamp still holds and every claim it gave is still
 * stored; what this walk sees is recorded for the next one (the index written numbers its claims by their lines).
 */
function listingMemo(stored: StoredListings | undefined): WalkMemo & { listings: Map<string, WalkListing>; walkedAt: number } {
  const listings = new Map<string, WalkListing>();
  return {
    listings,
    walkedAt: Date.now(),
    recall(dir: string): Listed | undefined {
      const last = stored?.listings.get(dir);
      if (!last || !stampHolds(dir, last.stamp, stored!.walkedAt)) return undefined;
      const claims: SessionClaim[] = [];
      for (const line of last.claims) {
        const claim = stored!.claimAt(line);
        if (!claim) return undefined;
        claims.push(claim);
      }
      return { stamp: last.stamp, claims, children: last.children };
    },
    record(dir: string, listed: Listed): void {
      listings.set(dir, listed); // its claims numbered by their lines when an index is written (IndexWriter.commit)
    },
  };
}

/** Fallback claims last: they list only what no regular session names (they yield a blob one names). */
function fallbacksLast<T>(items: T[], claimOf: (item: T) => SessionClaim): T[] {
  return [...items.filter((i) => !claimOf(i).fallback), ...items.filter((i) => claimOf(i).fallback)];
}

/** Claims, the one whose folders changed last first (a folder's mtime moves when a blob is added to it): one stat per folder. */
function byRecentChange(claims: SessionClaim[]): SessionClaim[] {
  const changed = new Map<SessionClaim, number>();
  for (const claim of claims) {
    let newest = 0;
    for (const folder of [claim.dir, ...claim.owns]) {
      try {
        // lstat: a claim may own a symlink in a folder's place (reported when described), never followed.
        newest = Math.max(newest, lstatSync(folder, { throwIfNoEntry: false })?.mtimeMs ?? 0);
      } catch {
        // unreadable: its description says so; it simply comes later
      }
    }
    changed.set(claim, newest);
  }
  return [...claims].sort((a, b) => changed.get(b)! - changed.get(a)!);
}
async function forEachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  });
  await Promise.all(workers);
}

/** A catalog's scans (see CatalogSessions for what they fill). */
export abstract class CatalogScan extends CatalogSessions {
  /** Bounded head of a blob and binary flag (a listing shows them). */
  abstract preview(key: string): Promise<{ preview: string; binary: boolean }>;
  /** Per-turn context series of a session (a listing may carry them). */
  abstract turnsFor(sessionKey: string): Promise<TurnSeries | undefined>;

  async scan(options: ScanOptions = {}): Promise<void> {
    await this.indexLoading;
    const index = this.loadedIndex ?? (this.indexFile ? await loadIndex(this.indexFile, claimKey) : undefined);
    this.loadedIndex = undefined;
    const stored = index?.entries ?? new Map<string, IndexedClaim>();
    const { claims, foldersListed, reusable, checkedAhead } = await this.walkAndCheck(index, options);
    const stats: ScanStats = { described: 0, reused: 0, indexLoaded: stored.size > 0, transcriptBytes: 0, foldersListed, checkedAhead, describedAhead: 0 };
    const transcriptBytesBefore = this.transcripts.bytesRead;
    const before = new Set(this.records.keys());
    // What is shown (an earlier scan, or the index) stays until it is described
    // again or found unchanged; only sessions whose claim is gone leave now.
    for (const key of before) if (!claims.has(key)) this.drop(key);
    for (const key of [...this.emptyClaims.keys()]) if (!claims.has(key)) this.emptyClaims.delete(key);
    const ordered = fallbacksLast([...claims.values()], (c) => c);
    const pace = pacer();
    const pause = pauser();
    const describeAll = (fresh: SessionClaim[]): Promise<void> =>
      forEachLimited(fresh, DESCRIBE_CONCURRENCY, async (claim) => {
        // Describing is mostly synchronous reads: the event loop (the extension host's) gets a turn every few ms.
        const turn = pause();
        if (turn) await turn;
        await this.describe(claim);
      });
    const describeInOrder = async (fallback: boolean): Promise<void> => {
      const fresh: SessionClaim[] = [];
      for (const claim of ordered) {
        if (!!claim.fallback !== fallback) continue;
        const key = claimKey(claim);
        if (reusable.has(key)) {
          const entry = stored.get(key)!;
          this.install(claim, entry, undefined);
          stats.reused++;
          await pace(1 + (entry.described?.blobs.length ?? 0));
        } else fresh.push(claim);
      }
      stats.described += fresh.length;
      if (fallback || fresh.length <= FIRST_SHOWN) return describeAll(fresh);
      // Thousands to describe (no index): the most recently changed first, and announced once they are in place, so a tree has its top long before the scan ends.
      const newestFirst = byRecentChange(fresh);
      await describeAll(newestFirst.slice(0, FIRST_SHOWN));
      this.pending.full = true;
      this.flush();
      await describeAll(newestFirst.slice(FIRST_SHOWN));
    };
    await describeInOrder(false);
    await describeInOrder(true);
    this.scanStamps = undefined;
    stats.transcriptBytes = this.transcripts.bytesRead - transcriptBytesBefore;
    this.lastScan = stats;
    if (this.options.previewOnScan) {
      await forEachLimited(this.allBlobs(), DESCRIBE_CONCURRENCY, (blob) => this.preview(blob.key).then(() => undefined, () => undefined));
    }
    for (const key of before) if (!this.records.has(key)) this.pending.removed.add(key);
    this.pending.full = true;
    this.flushSoon(0);
    if (stats.described > 0 || stored.size !== this.records.size + this.emptyClaims.size) await this.saveIndexNow();
  }

  /**
   * scan() for a one-off command over many blobs (list, grep): each session
   * is settled (found unchanged in the index, or described) and written to
   * the new index one at a time; only what sorts and counts it stays in
   * memory, and the listing reads each session back from the index when it
   * is visited. Nothing is kept in the catalog itself (sessions() stays
   * empty). Without an index to write, it is scan() and sessions().
   */
  async scanSessions(
    options: ScanOptions = {},
    progress: SettleProgress = { settled: new SettledSessions(), checked: () => undefined },
  ): Promise<SessionListing> {
    const old = this.indexFile ? IndexReader.open(this.indexFile) : undefined;
    let writer: IndexWriter | undefined;
    try {
      writer = this.indexFile ? await IndexWriter.open(this.indexFile) : undefined;
    } catch (err) {
      this.indexNotWritten(err);
    }
    if (writer) {
      try {
        return await this.settleAll(old, writer, options, progress);
      } catch (err) {
        await writer.close();
        if (!(err instanceof IndexWriteError)) {
          old?.close();
          throw err;
        }
        // A full disk is when `list` is most needed: the sessions are then held in memory instead.
        this.indexNotWritten(err);
      }
    }
    old?.close();
    await this.scan(options);
    progress.checked();
    return listingOf(this.sessions(), this.grepTargets(), (session) => this.turnsFor(session.key));
  }

  protected async settleAll(old: IndexReader | undefined, writer: IndexWriter, options: ScanOptions, { settled, checked }: SettleProgress): Promise<SessionListing> {
    const storedAt = old?.linesByKey(claimKey) ?? new Map<string, number>();
    const statBlobs = options.statBlobs !== false;
    const ahead = old && this.startCheckAhead(old.lineSpans(), options);
    const stats: ScanStats = { described: 0, reused: 0, indexLoaded: !!old && old.size > 0, transcriptBytes: 0, foldersListed: 0, checkedAhead: 0, describedAhead: 0 };
    const transcriptBytesBefore = this.transcripts.bytesRead;
    const pace = pacer();
    // With no index every session is described, which takes several times as long as the walk: a walk still going
    // after walkMs starts a worker meanwhile, so that it is ready when the describing begins.
    let waiting: WaitingWorker | undefined;
    let early: NodeJS.Timeout | undefined;
    if (!old && this.describeAheadAllowed(options)) {
      const startEarly = (): void => void (waiting = startWaiting(this.describeWorkerFile(options)));
      const walkMs = (options.describeAhead || {}).walkMs ?? DESCRIBE_AHEAD_WALK_MS;
      if (walkMs > 0) early = setTimeout(startEarly, walkMs);
      else startEarly();
    }
    try {
      const { claims, foldersListed, walked } = await this.walkRoots(old && { ...old.takeHeader(), claimAt: (line) => old.claims[line] });
      clearTimeout(early);
      stats.foldersListed = foldersListed;
      await ahead?.ready;
      const here = (e: CheckedClaim): boolean => entryUnchanged(e, walked, statBlobs);
      // Regular sessions first: a fallback lists only blobs no regular session names.
      for (const fallback of [false, true]) {
        const fresh: SessionClaim[] = [];
        for (const [key, claim] of claims) {
          if (!!claim.fallback !== fallback) continue;
          const at = storedAt.get(key);
          const entry = at === undefined ? undefined : old!.checked(at, true, options.keepListed);
          if (entry && this.stillHolds(entry, claim, checkedBy(ahead, at, here))) {
            settled.add(entry, key, { old: true, at: at! });
            stats.reused++;
          } else fresh.push(claim);
          await pace(1 + (entry?.described?.blobs.length ?? 0));
        }
        if (!fallback) checked();
        stats.described += fresh.length;
        await this.describeInOrder(fresh, writer, settled, stats, options, fallback ? undefined : waiting);
      }
    } finally {
      clearTimeout(early);
      this.scanStamps = undefined;
      await ahead?.stop();
      await waiting?.worker.terminate(); // one never handed sessions (one that was is stopped with its describing)
    }
    stats.checkedAhead = ahead?.judgedByWorker ?? 0;
    stats.transcriptBytes += this.transcripts.bytesRead - transcriptBytesBefore;
    this.lastScan = stats;
    let lines: Pick<IndexReader, 'entryAsChecked' | 'listed'>;
    if (!old || stats.described > 0 || old.size !== settled.all.length) {
      // Something changed: the unchanged sessions' lines join the new index as they were, with their last update
      // as settled (an index written before the trailer recorded updates has none to copy).
      for (const s of settled.all) if (s.line.old) s.line = { old: false, at: writer.addLine(s.claim, old!.line(s.line.at), Date.parse(s.updatedAt) || 0) };
      try {
        await writer.commit({ blobFolders: wholeFolders(settled.blobFolders), ...this.walked });
      } catch (err) {
        if (err instanceof IndexWriteError) throw err;
        this.indexNotWritten(err); // not renamed into place, still read here
      }
      old?.close();
      lines = writer;
    } else {
      await writer.close();
      lines = old;
    }
    const read = (s: Settled): SessionInfo => {
      const entry = lines.entryAsChecked(s.line.at);
      // An index edited so that the description (what `clean` deletes) differs from the part the scan checked is not
      // trusted, and removed so that the next run rebuilds it.
      if (entry === null) {
        if (this.indexFile) rmSync(this.indexFile, { force: true });
        throw new Error(`the catalog index does not hold together at ${s.key}: it was removed, run the command again`);
      }
      if (!entry?.described) throw new Error(`the catalog index lost ${s.key}`);
      const dropped = new Set(s.dropped);
      const blobs = entry.described.blobs.filter((_, i) => !dropped.has(i)).map((raw) => ownBlob(raw, s.key));
      return sessionInfo(s.key, this.rootOf(s.claim.dir)?.path ?? path.dirname(s.claim.dir), entry.described.session, blobs);
    };
    // As its line keeps it, unless another session took some of its blobs (or the line is not what it says).
    const json = (s: Settled): SessionJson => {
      const kept = s.dropped ? undefined : lines.listed(s.line.at);
      return kept && listedAsChecked(kept, s) ? kept : infoJson(read(s));
    };
    const listed = settled.listed();
    const byKey = new Map(listed.map((s) => [s.key, s]));
    return {
      sessions: listed.length,
      blobs: settled.blobs.size,
      bytes: listed.reduce((n, s) => n + s.bytes, 0),
      skipped: listed.reduce((n, s) => n + s.skipped, 0),
      forEach: (visit) => visitInTurn(listed, (s) => visit(read(s))),
      forEachJson: (visit) => visitInTurn(listed, (s) => visit(json(s))),
      grepTargets: () => grepTargetsOf(settled.blobs, settled.blobFolders, this.reads),
      turns: async (session) => {
        const claim = byKey.get(session.key)?.claim;
        if (!claim) return undefined;
        // A source that records no calls gives an empty series, as turnsFor() does.
        const { indexed, calls } = await this.describeClaim(claim);
        return indexed.described ? buildTurnSeries(session.key, calls ?? [], session.blobs, session.skipped, session.source) : undefined;
      },
      close: async () => {
        if (lines === old) old.close();
        else await writer.close();
      },
    };
  }

  /**
   * Walk the roots and find which stored sessions still hold. A worker shares the stats of a large index, as for
   * `list`: the extension's first scan checks the index it has just shown.
   */
  protected async walkAndCheck(index: LoadedIndex | undefined, options: ScanOptions): Promise<{ claims: Map<string, SessionClaim>; foldersListed: number; reusable: Set<string>; checkedAhead: number }> {
    const ahead = index?.lines && this.startCheckAhead(index.lines.spans, options);
    try {
      const { claims, foldersListed, walked } = await this.walkRoots(index && { ...index, claimAt: (line) => index.claims[line] });
      await ahead?.ready;
      const here = (e: IndexedClaim): boolean => entryUnchanged(e, walked, options.statBlobs !== false);
      const reusable = new Set<string>();
      const pace = pacer();
      for (const [key, claim] of claims) {
        const entry = index?.entries.get(key);
        if (entry && this.stillHolds(entry, claim, checkedBy(ahead, index?.lines?.at.get(key), here))) reusable.add(key);
        await pace(1 + (entry?.described?.blobs.length ?? 0));
      }
      return { claims, foldersListed, reusable, checkedAhead: ahead?.judgedByWorker ?? 0 };
    } finally {
      await ahead?.stop();
    }
  }

  /** A worker checking an index's lines from the last one back (see ScanOptions.checkAhead); undefined when not worth it or not allowed. */
  protected startCheckAhead(spans: LineSpans, options: ScanOptions): BlobCheck | undefined {
    if (options.statBlobs === false || options.checkAhead === false) return undefined;
    return BlobCheck.start(spans, options.checkAhead?.workerFile ?? DEFAULT_BLOB_CHECK_WORKER, options.checkAhead?.minBytes);
  }

  /**
   * Describe `fresh` and settle each in turn, written to `writer`. Once the rest would take long at this pace, a
   * worker takes them from the last one back (see ScanOptions.describeAhead) and hands each back as its index line,
   * settled here in turn: the order decides which of two sessions lists a blob both name.
   */
  protected async describeInOrder(fresh: SessionClaim[], writer: IndexWriter, settled: SettledSessions, stats: ScanStats, options: ScanOptions, waiting?: WaitingWorker): Promise<void> {
    let there: DescribeAhead | undefined;
    let thereAsked = false;
    const started = Date.now();
    try {
      // One at a time: only one session's parsed transcript and description are held. Four at once
      // were no faster (the work is on this thread) and held four.
      for (let i = 0; i < fresh.length; i++) {
        const claim = fresh[i]!;
        // A worker started during the walk is used at once: the walk's length judged the describing's.
        if (!thereAsked && worthAWorker(i, fresh.length, Date.now() - started, waiting ? 0 : (options.describeAhead || {}).minMs) && this.describeAheadAllowed(options)) {
          thereAsked = true;
          there = this.startDescribeAhead(fresh, i, waiting ?? startWaiting(this.describeWorkerFile(options)), (at, line, updated) => writer.addLine(fresh[at]!, line, updated));
        }
        const described = await there?.take(i);
        // (A line that did not parse would stay in the index beside the session's own: the next scan rewrites it.)
        const entry = described && writer.checked(described.at);
        if (entry) {
          if (described.problem) this.reportOnce(described.problem);
          stats.transcriptBytes += described.transcriptBytes;
          settled.add(entry, claimKey(claim), { old: false, at: described.at });
          continue;
        }
        const { indexed } = await this.describeClaim(claim, true);
        settled.add(indexed, claimKey(claim), { old: false, at: writer.add(indexed) });
      }
    } finally {
      stats.describedAhead += there?.describedByWorker ?? 0;
      await there?.stop();
    }
  }

  /** Whether a worker may describe sessions (see ScanOptions.describeAhead). Not while watching: live updates read on from the transcripts this thread keeps. */
  protected describeAheadAllowed(options: ScanOptions): boolean {
    return options.describeAhead !== false && !this.watcher;
  }

  protected describeWorkerFile(options: ScanOptions): string {
    return (options.describeAhead || {}).workerFile ?? DEFAULT_DESCRIBE_WORKER;
  }

  /** A worker describing `fresh` from the last one back to `from` (see describe-ahead.ts); undefined when it cannot start. */
  protected startDescribeAhead(fresh: SessionClaim[], from: number, waiting: WaitingWorker | undefined, keep: KeepLine): DescribeAhead | undefined {
    const claims = fresh.slice(from);
    const stamped = claims.map((claim) => claimFolders(claim).flatMap((folder): Array<[string, string]> => {
      const stamp = this.walkStamp(folder);
      return stamp === undefined ? [] : [[folder, stamp]];
    }));
    return DescribeAhead.start({ claims, sources: this.sources.map((s) => s.name), roots: this.roots, stamped }, from, waiting, keep);
  }

  /** Walk every existing root (recalling unchanged folders from the stored listings); the claims found, by key. */
  protected async walkRoots(stored: StoredListings | undefined): Promise<{ claims: Map<string, SessionClaim>; foldersListed: number; walked?: WalkedStamps }> {
    const claims = new Map<string, SessionClaim>();
    const memo = this.indexFile ? listingMemo(stored) : undefined;
    let foldersListed = 0;
    for (const root of this.roots) {
      root.exists = folderId(root.path) !== undefined;
      if (!root.exists) {
        if (root.origin === 'user') this.reportOnce(notAFolder(root.path));
        continue;
      }
      const result = await walk(root.path, root.depth, this.sourcesFor(root), undefined, memo);
      foldersListed += result.listed;
      for (const bad of result.unreadable) this.reportOnce(`cannot read ${bad.path} (${bad.code})`);
      for (const claim of result.claims) claims.set(claimKey(claim), claim);
    }
    if (memo) this.walked = { listings: memo.listings, walkedAt: memo.walkedAt };
    this.scanStamps = memo?.listings;
    return { claims, foldersListed, walked: memo?.listings };
  }

  /**
   * Put in place every session the index stored, unchecked, and announce them
   * (one `full` event): the catalog as it was last saved, to show at once
   * while scan() checks it and corrects what changed. False when there is no index.
   */
  async showIndexed(): Promise<boolean> {
    if (!this.indexFile) return false;
    const shown = new Set<IndexedClaim>();
    const showAll = (entries: Iterable<IndexedClaim>): void => {
      if (this.disposed) return;
      for (const entry of entries) {
        if (shown.has(entry)) continue;
        shown.add(entry);
        this.install(entry.claim, entry, undefined);
      }
      this.pending.full = true;
      this.flushSoon(0);
    };
    let firstShown!: (shown: boolean) => void;
    const first = new Promise<boolean>((resolve) => (firstShown = resolve));
    // The newest sessions first: the top of a tree of thousands shows before the rest is read (scan() waits for it).
    this.indexLoading = loadIndex(this.indexFile, claimKey, {
      count: FIRST_SHOWN,
      show: (entries) => {
        if (entries.length === 0) return;
        showAll(entries);
        firstShown(true);
      },
    }).then((index) => {
      this.loadedIndex = index;
      showAll(fallbacksLast([...index.entries.values()], (e) => e.claim));
      firstShown(index.entries.size > 0);
    }, (err: unknown) => {
      // Unreadable midway: what is shown stays until scan() (which reads the index again) checks it.
      firstShown(shown.size > 0);
      this.logger.debug?.(`index not read: ${(err as Error).message}`);
    });
    return first;
  }

}