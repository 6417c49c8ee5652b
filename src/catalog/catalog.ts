// The catalog: every agent's spill sessions -> blobs, kept live.
// A scan walks the known roots once; a session whose folders and files are
// unchanged since the persistent index stored it (cacheDir) is taken from
// there instead of being described again. Afterwards a watched change
// refreshes only the session that owns the changed path (or claims a new folder).
import * as path from 'node:path';
import { lstatSync, promises as fsp, rmSync, statSync } from 'node:fs';
import type {
  BlobInfo,
  CatalogEvent,
  CatalogLogger,
  CatalogOptions,
  CleanExecuteOptions,
  CleanPlan,
  CleanableSession,
  CleanRequest,
  CleanResult,
  Disposable,
  GrepMatch,
  GrepOptions,
  GrepProgress,
  GrepSummary,
  KnownRoot,
  SessionInfo,
  SliceResult,
  SourceName,
  TurnSeries,
} from './types';
import type { ApiCall } from './transcripts/calls';
import { readHead } from './read/head';
import { RootedReads } from './read/rooted-read';
import { removeEmptiedBlobFolders } from './clean/emptyFolders';
import { envDirs } from './sources/roots';
import { claimKey, type Described, type SessionClaim, type Source } from './sources/source';
import { BlobCheck, DEFAULT_BLOB_CHECK_WORKER } from './scan/blob-check';
import { DEFAULT_DESCRIBE_WORKER, DESCRIBE_AHEAD_WALK_MS, DescribeAhead, startWaiting, worthAWorker, type KeepLine, type WaitingWorker } from './scan/describe-ahead';
import { blobsUnchanged, stampsHold, indexFileFor, IndexReader, IndexWriteError, IndexWriter, loadIndex, saveIndex, stampHolds, type CheckedClaim, type IndexedClaim, type LineSpans, type LoadedIndex, type StoredListing, type WalkListing } from './index/index-file';
import { BlobSizes, newestFirst, SettledSessions, type Settled, type SessionListing } from './scan/settled';
import { blobOrder, listedAsChecked, sessionJson, type SessionJson } from './index/session-json';
import { sourcesNamed } from './sources/index';
import { TranscriptCache } from './transcripts/transcripts';
import { offer, walk, type Listed, type WalkMemo } from './scan/walk';
import { countLines, readSlice, type SliceOptions } from './read/slice';
import { grep, grepWhileLoading, type BlobFolder, type BlobFolderNames, type GrepTargets } from './grep/grep';
import { buildTurnSeries } from './turns/turns';
import { executeClean, planClean } from './clean/clean';
import { CatalogWatcher } from './live/watcher';
import { claimFolders, describeClaim, rootOf } from './scan/describe';
import { isInside } from '../spill/inside';
import { isInternalName } from '../spill/internal-names';
import { childPath } from './shared/child-path';
import { pauser } from './shared/pause';
import { isoTime } from '../spill/iso-time';

/** Depth walked below a user-given root (any layout may sit a few levels down). */
const USER_ROOT_DEPTH = 6;
/**
 * Sessions described at once. Four keep the cold scan as fast as sixteen did
 * (the work is mostly on this thread) and its peak memory lower (100k blobs:
 * about 220 MB instead of 260-290 MB): each session in flight holds its parsed transcript.
 */
const DESCRIBE_CONCURRENCY = 4;
/** Sessions showIndexed() shows before it reads the rest of the index: more than a side bar's height of rows. */
const FIRST_SHOWN = 200;

interface SessionRecord {
  claim: SessionClaim;
  info: SessionInfo;
  /** Undefined when taken from the index: turnsFor() describes the session again. */
  calls: ApiCall[] | undefined;
  dependsOn: string[];
  /** What the index stores for it. */
  indexed: IndexedClaim;
}

/** What a streaming scan reports while it runs: the sessions settled so far, and when the unchanged regular ones are (grep prints their matches then). */
interface SettleProgress {
  settled: SettledSessions;
  checked: () => void;
}

/** What one scan did (for tests and benchmarks). */
export interface ScanStats {
  /** Sessions described by their source (transcripts and folders read). */
  described: number;
  /** Sessions taken from the index unchanged. */
  reused: number;
  /** Whether an index file was found and read. */
  indexLoaded: boolean;
  /** Transcript bytes parsed by this scan. */
  transcriptBytes: number;
  /** Folders the walk listed (unchanged ones are recalled from the index instead). */
  foldersListed: number;
  /** Sessions a worker thread checked (see ScanOptions.checkAhead). */
  checkedAhead: number;
  /** Sessions a worker thread described (see ScanOptions.describeAhead). */
  describedAhead: number;
}

export interface ScanOptions {
  /**
   * Stat every blob to catch one that grew or shrank in place (default true).
   * grep passes false: it reads the files anyway, and added or deleted blobs
   * still show through their folders' stamps.
   */
  statBlobs?: boolean;
  /**
   * For a large index, a worker thread checks its lines (stamps and blobs) from the last one back while the scan goes
   * from the first (see blob-check.ts): `workerFile` (default beside this bundle), from `minBytes` of lines. false: never.
   */
  checkAhead?: { workerFile?: string; minBytes?: number } | false;
  /**
   * When a streaming scan (scanSessions) has sessions to describe that would take this thread `minMs` or more at its
   * pace so far, a worker thread describes them from the last one back while the scan goes on from where it is (see
   * describe-ahead.ts): `workerFile` (default beside this bundle). With no index, a walk still going after `walkMs`
   * (0: at once) starts the worker meanwhile, and it takes sessions from the first one described. false: never.
   */
  describeAhead?: { workerFile?: string; minMs?: number; walkMs?: number } | false;
}

/**
 * Stats (or installed blobs) between yields to the event loop while checking
 * stamps and installing: the extension host stays responsive, and a ripgrep
 * started early never waits long on a full pipe (it stalls when nobody reads).
 */
const STAMPS_PER_YIELD = 1024;

/** Counts work done and yields to the event loop after every STAMPS_PER_YIELD units of it. */
function pacer(): (work: number) => Promise<void> | undefined {
  let done = 0;
  return (work) => {
    done += work;
    if (done < STAMPS_PER_YIELD) return undefined;
    done = 0;
    return new Promise((resolve) => setImmediate(resolve));
  };
}

const quietLogger: CatalogLogger = { warn: () => undefined };

export class Catalog {
  private readonly sources: Source[];
  private readonly roots: KnownRoot[];
  private readonly logger: CatalogLogger;
  private readonly transcripts = new TranscriptCache();
  private readonly records = new Map<string, SessionRecord>();
  /** Claims that hold nothing (kept for the index, so they are not described again). */
  private readonly emptyClaims = new Map<string, IndexedClaim>();
  /** Blob key -> the blob (its sessionKey names the owner). */
  private readonly blobMap = new Map<string, BlobInfo>();
  private readonly indexFile: string | undefined;
  /** The index already read (by showIndexed() or scanAndGrep()): the next scan checks it instead of reading it again. */
  private loadedIndex: LoadedIndex | undefined;
  /** showIndexed() reading the rest of the index after the newest sessions. */
  private indexLoading: Promise<void> | undefined;
  /** The last scan's folder listings, saved with the index so the next walk lists only folders that changed. */
  private walked: { listings: ReadonlyMap<string, WalkListing>; walkedAt: number } = { listings: new Map(), walkedAt: 0 };
  /**
   * While a scan describes what its walk found: the stamps that walk took before listing each folder. A session's
   * own folder is then not stat'ed again to be stamped (a stamp taken before the description reads it is what it needs).
   */
  private scanStamps: WalkedStamps | undefined;
  private indexSave: NodeJS.Timeout | undefined;
  private lastScan: ScanStats = { described: 0, reused: 0, indexLoaded: false, transcriptBytes: 0, foldersListed: 0, checkedAhead: 0, describedAhead: 0 };
  /** Transcript/manifest/log path -> keys of sessions that read it. */
  private readonly dependents = new Map<string, Set<string>>();
  /** Claimed folder or owned sub-folder -> session key. */
  private readonly folderOwner = new Map<string, string>();
  private readonly listeners = new Set<(event: CatalogEvent) => void>();
  private readonly reported = new Set<string>();
  private readonly problemList: string[] = [];
  private pending = { changed: new Set<string>(), removed: new Set<string>(), full: false };
  private flushTimer: NodeJS.Timeout | undefined;
  private watcher: CatalogWatcher | undefined;
  private rootPoll: NodeJS.Timeout | undefined;
  /** Each watched root's folder (folderId; undefined: missing), to tell when it is removed or made again. */
  private readonly watchedRoots = new Map<string, string | undefined>();
  private checkingRoots = false;
  private disposed = false;
  /** Reads of blobs, refused when a folder below a root was swapped for a symlink. */
  private readonly reads: RootedReads;

  constructor(private readonly options: CatalogOptions = {}) {
    this.sources = sourcesNamed(options.sources);
    this.logger = options.logger ?? quietLogger;
    this.roots = resolveRoots(this.sources, options);
    this.reads = new RootedReads(this.roots.map((r) => r.path));
    this.indexFile = options.cacheDir ? indexFileFor(options.cacheDir, this.roots, this.sources.map((s) => s.name)) : undefined;
  }

  /**
   * Walk every known root and describe every session (replaces the previous
   * state; fires one `full` event). With a cacheDir, sessions unchanged since
   * the index stored them are not described again, and the index is updated.
   */
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

  private async settleAll(old: IndexReader | undefined, writer: IndexWriter, options: ScanOptions, { settled, checked }: SettleProgress): Promise<SessionListing> {
    const storedAt = old?.linesByKey(claimKey) ?? new Map<string, number>();
    const statBlobs = options.statBlobs !== false;
    const ahead = old && this.startCheckAhead(old.lineSpans(), options);
    const stats: ScanStats = { described: 0, reused: 0, indexLoaded: !!old && old.size > 0, transcriptBytes: 0, foldersListed: 0, checkedAhead: 0, describedAhead: 0 };
    const transcriptBytesBefore = this.transcripts.bytesRead;
    const pace = pacer();
    // With no index every session is described, which takes several times as long as the walk: a walk still going
    // after walkMs starts a worker meanwhile, so that it is ready (some 130 ms later) when the describing begins.
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
          const entry = at === undefined ? undefined : old!.checked(at, true);
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
  private async walkAndCheck(index: LoadedIndex | undefined, options: ScanOptions): Promise<{ claims: Map<string, SessionClaim>; foldersListed: number; reusable: Set<string>; checkedAhead: number }> {
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
  private startCheckAhead(spans: LineSpans, options: ScanOptions): BlobCheck | undefined {
    if (options.statBlobs === false || options.checkAhead === false) return undefined;
    return BlobCheck.start(spans, options.checkAhead?.workerFile ?? DEFAULT_BLOB_CHECK_WORKER, options.checkAhead?.minBytes);
  }

  /**
   * Describe `fresh` and settle each in turn, written to `writer`. Once the rest would take long at this pace, a
   * worker takes them from the last one back (see ScanOptions.describeAhead) and hands each back as its index line,
   * settled here in turn: the order decides which of two sessions lists a blob both name.
   */
  private async describeInOrder(fresh: SessionClaim[], writer: IndexWriter, settled: SettledSessions, stats: ScanStats, options: ScanOptions, waiting?: WaitingWorker): Promise<void> {
    let there: DescribeAhead | undefined;
    let thereAsked = false;
    const started = Date.now();
    try {
      // One at a time: only one session's parsed transcript and description are held. Four at once
      // were no faster (the work is on this thread) and held four: 10 sessions of 10,000 blobs
      // peaked at 366 MB instead of 201 MB.
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
  private describeAheadAllowed(options: ScanOptions): boolean {
    return options.describeAhead !== false && !this.watcher;
  }

  private describeWorkerFile(options: ScanOptions): string {
    return (options.describeAhead || {}).workerFile ?? DEFAULT_DESCRIBE_WORKER;
  }

  /** A worker describing `fresh` from the last one back to `from` (see describe-ahead.ts); undefined when it cannot start. */
  private startDescribeAhead(fresh: SessionClaim[], from: number, waiting: WaitingWorker | undefined, keep: KeepLine): DescribeAhead | undefined {
    const claims = fresh.slice(from);
    const stamped = claims.map((claim) => claimFolders(claim).flatMap((folder): Array<[string, string]> => {
      const stamp = this.walkStamp(folder);
      return stamp === undefined ? [] : [[folder, stamp]];
    }));
    return DescribeAhead.start({ claims, sources: this.sources.map((s) => s.name), roots: this.roots, stamped }, from, waiting, keep);
  }

  /** Walk every existing root (recalling unchanged folders from the stored listings); the claims found, by key. */
  private async walkRoots(stored: StoredListings | undefined): Promise<{ claims: Map<string, SessionClaim>; foldersListed: number; walked?: WalkedStamps }> {
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

  /** What the last scan reused and described. */
  scanStats(): ScanStats {
    return { ...this.lastScan };
  }

  /** All sessions, most recently updated first. */
  sessions(): SessionInfo[] {
    return [...this.records.values()].map((r) => r.info).sort(newestFirst);
  }

  /** One session by key. */
  session(key: string): SessionInfo | undefined {
    return this.records.get(key)?.info;
  }

  /** Sessions whose key or agent session id equals `idOrKey`, or whose id starts with it (>= 4 chars). */
  findSessions(idOrKey: string): SessionInfo[] {
    return sessionsNamed(idOrKey, this.sessions());
  }

  /** One blob by key (its absolute path). */
  blob(key: string): BlobInfo | undefined {
    return this.blobMap.get(key);
  }

  /** Total lines/files skipped while describing (torn lines, unknown line types, symlinks, ...). */
  skipped(): number {
    let total = 0;
    for (const record of this.records.values()) total += record.info.skipped;
    return total;
  }

  /** Problems met while scanning (unreadable roots and folders, each reported once). */
  problems(): string[] {
    return [...this.problemList];
  }

  /** The roots scanned (defaults and user roots; `exists` as of the last scan). Deletion never leaves them. */
  knownRoots(): KnownRoot[] {
    return this.roots.map((r) => ({ ...r, sources: r.sources === '*' ? '*' : [...r.sources] }));
  }

  /** Listen for coalesced changes. */
  onDidChange(listener: (event: CatalogEvent) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Start watching the existing roots (a watcher per folder, see watcher.ts); resolves once the watchers are ready. */
  async watch(): Promise<void> {
    if (this.watcher || this.disposed) return;
    const roots = this.roots.filter((r) => r.exists);
    this.watcher = new CatalogWatcher(roots, {
      settleMs: this.options.settleMs ?? 150,
      coalesceMs: this.options.coalesceMs ?? 75,
      onBatch: (paths) => this.applyChanges(paths),
      onError: (message) => this.reportOnce(message),
    });
    await this.watcher.ready();
    for (const root of roots) this.watchedRoots.set(root.path, folderId(root.path));
    // A root made later, or removed and made again (its watchers are on what is gone), has no watched folder above it to tell: look now and then.
    this.rootPoll = setInterval(() => void this.checkRoots(), this.options.rootPollMs ?? 5000);
    this.rootPoll.unref();
  }

  /** Let go of the roots removed since they were watched; watch and walk the ones that appeared (or were made again). */
  private async checkRoots(): Promise<void> {
    if (this.checkingRoots) return;
    this.checkingRoots = true;
    try {
      for (const root of this.roots) {
        if (this.disposed) return;
        const id = folderId(root.path);
        const watched = this.watchedRoots.get(root.path);
        if (id === watched) continue;
        if (watched !== undefined) {
          this.watcher?.remove(root.path);
          // The folder went (or another took its place): moving it away sends no event for the files in it, so
          // its sessions leave now; those still there (or there again) are found by the walk below.
          for (const [key, record] of [...this.records]) {
            if (this.rootOf(record.claim.dir)?.path !== root.path) continue;
            this.drop(key);
            this.pending.removed.add(key);
          }
        }
        this.watchedRoots.set(root.path, id);
        root.exists = id !== undefined;
        if (!root.exists) {
          if (root.origin === 'user') this.reportOnce(notAFolder(root.path));
          this.flushSoon(0);
          continue;
        }
        // Watch first, then walk: a file written in between is seen by one or the other.
        await this.watcher?.add(root);
        const result = await walk(root.path, root.depth, this.sourcesFor(root));
        for (const bad of result.unreadable) this.reportOnce(`cannot read ${bad.path} (${bad.code})`);
        for (const claim of result.claims) {
          const key = await this.describe(claim);
          if (this.records.has(key)) {
            this.pending.removed.delete(key);
            this.pending.changed.add(key);
          }
        }
        this.flushSoon(0);
      }
    } finally {
      this.checkingRoots = false;
    }
  }

  /** Stop watching and drop listeners. */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.indexSave) {
      clearTimeout(this.indexSave);
      this.indexSave = undefined;
      await this.saveIndexNow();
    }
    if (this.rootPoll) clearInterval(this.rootPoll);
    this.listeners.clear();
    await this.watcher?.close();
    this.watcher = undefined;
  }

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
          // The scan (its first step, opening the index, takes 150 ms at 100,000 blobs) starts once ripgrep
          // searches: opening its folders beside the scan took 200 ms at 100,000 blobs, 100 ms alone.
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

  /** Every blob as grep targets: whole folders where a layout has them, the rest by name; only known blobs are accepted. */
  private grepTargets(): GrepTargets {
    const sizes = new BlobSizes();
    for (const blob of this.blobMap.values()) sizes.addPath(blob.path, blob.bytes);
    return grepTargetsOf(sizes, this.blobFolders(), this.reads);
  }

  /** Folders whose every regular file (but manifests; of those named so, given a glob) is a blob, as the sources described them. */
  private blobFolders(): BlobFolderNames {
    const folders: BlobFolderNames = new Map();
    for (const { indexed } of this.records.values()) for (const folder of indexed.described?.blobFolders ?? []) folders.set(folder, indexed.described!.blobNames);
    return folders;
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

  // ---- internals -------------------------------------------------------

  private sourcesFor(root: KnownRoot): Source[] {
    return root.sources === '*' ? this.sources : this.sources.filter((s) => (root.sources as SourceName[]).includes(s.name));
  }

  private allBlobs(): BlobInfo[] {
    return [...this.records.values()].flatMap((r) => r.info.blobs);
  }

  private rootOf(target: string): KnownRoot | undefined {
    return rootOf(this.roots, target);
  }

  /** Describe one claim and put (or drop) its session, then the fallback sessions it affects; returns its key. */
  private async describe(claim: SessionClaim): Promise<string> {
    const key = claimKey(claim);
    const before = this.records.get(key)?.info.blobs.map((b) => b.key) ?? [];
    const takenFrom = await this.describeOne(claim);
    if (claim.fallback) return key;
    // A regular session took blobs from a fallback session, or let some go
    // (a fallback may list them now): the fallback sessions follow.
    const now = new Set(this.records.get(key)?.info.blobs.map((b) => b.key) ?? []);
    const fallbacks = new Map<string, SessionClaim>();
    for (const taken of takenFrom) {
      const record = this.records.get(taken);
      if (record) fallbacks.set(taken, record.claim);
    }
    // Released blobs: their folders may hold (or now make) a fallback session.
    const releasedDirs = new Set(before.filter((b) => !now.has(b)).map((b) => path.dirname(b)));
    for (const folder of releasedDirs) {
      const root = this.rootOf(folder);
      const entries = root ? await fsp.readdir(folder, { withFileTypes: true }).catch(() => undefined) : undefined;
      if (!root || !entries) continue;
      for (const found of offer({ path: folder, entries }, this.sourcesFor(root))) if (found.fallback) fallbacks.set(claimKey(found), found);
    }
    for (const [fallbackKey, fallbackClaim] of fallbacks) {
      const old = this.records.get(fallbackKey);
      const print = old && fingerprint(old.info);
      await this.describeOne(fallbackClaim);
      const after = this.records.get(fallbackKey);
      if (!after && old) this.pending.removed.add(fallbackKey);
      else if (after && fingerprint(after.info) !== print) this.pending.changed.add(fallbackKey);
    }
    return key;
  }

  /**
   * Describe one claim by its source and put (or drop) its session; returns the fallback sessions it took blobs from.
   * API calls are kept when watching or when asked (turns): a one-off scan does not hold every session's.
   */
  private async describeOne(claim: SessionClaim, keepCalls = !!this.watcher): Promise<Set<string>> {
    const { indexed, calls } = await this.describeClaim(claim);
    if (!indexed.described) {
      this.drop(claimKey(claim));
      this.emptyClaims.set(claimKey(claim), indexed);
      return new Set();
    }
    return this.install(claim, indexed, keepCalls ? calls ?? [] : undefined);
  }

  /** The stamp the running scan's walk took of `folder` before listing it; undefined outside a scan, or for a folder it did not list. */
  private walkStamp(folder: string): string | undefined {
    return this.scanStamps?.get(folder)?.stamp;
  }

  /**
   * What a claim's source describes now, with the stamps that tell later whether it still holds (described null: it
   * holds nothing). `listing`: for a streaming scan's listing, its calls not for `turns` (see forListing).
   */
  private async describeClaim(claim: SessionClaim, listing = false): Promise<{ indexed: IndexedClaim; calls?: ApiCall[] }> {
    const stamped = (folder: string): string | undefined => this.walkStamp(folder);
    const described = await describeClaim(claim, { sources: this.sources, roots: this.roots, transcripts: this.transcripts, logger: this.logger, keepTranscripts: !!this.watcher, stamped, listing });
    if (described.problem) this.reportOnce(described.problem);
    return described;
  }

  /**
   * Whether a stored description still holds: the same claim, and `unchanged` (its stamps, and its blobs' sizes and
   * mtimes unless a scan skips them). A folder this scan's walk stamped (a session's own) is not stat'ed again.
   */
  private stillHolds<E extends CheckedClaim>(entry: E, claim: SessionClaim, unchanged: (entry: E) => boolean): boolean {
    // A walk that recalled the folder hands back the index's own claim object: no need to compare it field by field.
    return (entry.claim === claim || JSON.stringify(entry.claim) === JSON.stringify(claim)) && this.blobsAsDescribed(entry) && unchanged(entry);
  }

  /**
   * Whether every blob an entry names lies below a known root, in a folder its description stamped (describing
   * stamps each blob's folder; a file named by its transcript, such as pi's log, is stamped itself). An index
   * edited by hand could name any file, the session's own transcript included, for `clean` to delete.
   */
  private blobsAsDescribed(entry: CheckedClaim): boolean {
    const stamped = new Set(entry.stamps.map(([file]) => file));
    const transcript = entry.described?.session.transcript;
    const blobs = entry.described?.blobs ?? [];
    let checked: string | undefined;
    for (let i = 0; i < blobs.length; i++) {
      const blob = blobs[i]!;
      // A row under a stored folder is that folder and its name (no path to take apart: 100,000 of them).
      const stored = entry.blobFolderOf?.[i];
      const folder = stored ?? path.dirname(blob.path);
      const name = stored !== undefined ? blob.name : path.basename(blob.path);
      // Never the session's own transcript, nor Spillway's own files (a manifest), nor a name that leaves its folder.
      if (blob.path === transcript || isInternalName(name) || name.includes(path.sep) || name === '..' || name === '.') return false;
      if (folder === checked) continue; // a session's blobs come folder by folder
      if (!path.isAbsolute(blob.path) || !this.rootOf(folder)) return false;
      if (stamped.has(folder)) checked = folder;
      else if (!stamped.has(blob.path)) return false;
    }
    return true;
  }

  /** Put a described session in place (dropping what it held before); returns the fallback sessions it took blobs from. */
  private install(claim: SessionClaim, indexed: IndexedClaim, calls: ApiCall[] | undefined): Set<string> {
    const key = claimKey(claim);
    const root = this.rootOf(claim.dir)?.path ?? path.dirname(claim.dir);
    const described = indexed.described;
    this.emptyClaims.delete(key);
    if (!described) {
      this.drop(key);
      this.emptyClaims.set(key, indexed);
      return new Set();
    }
    // Lazily read facts (preview, binary, lines) survive a refresh while the file is unchanged.
    const previous = new Map((this.records.get(key)?.info.blobs ?? []).map((b) => [b.key, b]));
    this.drop(key);
    const takenFrom = new Set<string>();
    const blobs: BlobInfo[] = [];
    for (const raw of described.blobs) {
      const other = this.blobMap.get(raw.path)?.sessionKey;
      // One blob, one session (forked pi sessions share logs); a fallback session yields it.
      if (other && other !== key) {
        if (claim.fallback || !this.records.get(other)?.claim.fallback) continue;
        takenFrom.add(other);
      }
      const blob = ownBlob(raw, key);
      const old = previous.get(blob.key);
      if (old && old !== blob && old.bytes === blob.bytes && old.mtimeMs === blob.mtimeMs) {
        if (old.preview !== undefined) blob.preview = old.preview;
        if (old.binary !== undefined) blob.binary = old.binary;
        if (old.lines !== undefined) blob.lines = old.lines;
      }
      blobs.push(blob);
    }
    if (blobs.length === 0) {
      this.emptyClaims.set(key, indexed); // every blob is another session's
      return takenFrom;
    }
    const info = sessionInfo(key, root, described.session, blobs);
    this.records.set(key, { claim, info, calls, dependsOn: described.dependsOn, indexed });
    for (const blob of blobs) this.blobMap.set(blob.key, blob);
    for (const dep of described.dependsOn) {
      let set = this.dependents.get(dep);
      if (!set) this.dependents.set(dep, (set = new Set()));
      set.add(key);
    }
    for (const folder of [claim.dir, ...claim.owns]) this.folderOwner.set(folder, key);
    return takenFrom;
  }

  private drop(key: string): void {
    const record = this.records.get(key);
    if (!record) return;
    this.records.delete(key);
    for (const blob of record.info.blobs) if (this.blobMap.get(blob.key)?.sessionKey === key) this.blobMap.delete(blob.key);
    for (const dep of record.dependsOn) this.dependents.get(dep)?.delete(key);
    for (const folder of [record.claim.dir, ...record.claim.owns]) if (this.folderOwner.get(folder) === key) this.folderOwner.delete(folder);
  }

  /** Write the index now (a failure is logged: it is only a cache). */
  private async saveIndexNow(): Promise<void> {
    if (!this.indexFile) return;
    try {
      const entries = [...[...this.records.values()].map((r) => r.indexed), ...this.emptyClaims.values()];
      await saveIndex(this.indexFile, entries, { blobFolders: wholeFolders(this.blobFolders()), ...this.walked });
    } catch (err) {
      this.indexNotWritten(err);
    }
  }

  /** The index is only a cache: a failure to write it (a full disk) is reported once, and everything goes on without it. */
  private indexNotWritten(err: unknown): void {
    this.reportOnce(`cannot write the catalog index ${this.indexFile}: ${(err as Error).message}`);
  }

  /** Live changes are written to the index a little later, together. */
  private saveIndexSoon(): void {
    if (!this.indexFile || this.indexSave || this.disposed) return;
    this.indexSave = setTimeout(() => {
      this.indexSave = undefined;
      void this.saveIndexNow();
    }, this.options.indexSaveMs ?? 2000);
    this.indexSave.unref();
  }

  /**
   * React to changed paths (a coalesced watcher batch, or a clean): refresh
   * the sessions owning or reading them; offer unknown folders to the sources.
   */
  private async applyChanges(paths: string[]): Promise<void> {
    if (this.disposed) return;
    const refresh = new Map<string, SessionClaim>();
    const probe = new Set<string>();
    for (const changed of paths) {
      for (const key of this.dependents.get(changed) ?? []) {
        const record = this.records.get(key);
        if (record) refresh.set(key, record.claim);
      }
      const owner = this.ownerOf(changed);
      if (owner) {
        refresh.set(owner.key, owner.claim);
        continue;
      }
      if (this.blobMap.has(changed)) continue;
      // Unknown place: the folder it is in (and the changed path, if a folder) may be a new session.
      probe.add(path.dirname(changed));
      probe.add(changed);
    }
    for (const dir of probe) {
      const root = this.rootOf(dir);
      if (!root) continue;
      const sources = this.sourcesFor(root);
      // Climb a few levels: a new blob may make its grandparent claimable (claude: <session>/tool-results/x).
      for (let d: string = dir, i = 0; i < 3 && isInside(root.path, d); d = path.dirname(d), i++) {
        const entries = await fsp.readdir(d, { withFileTypes: true }).catch(() => undefined);
        if (!entries) continue;
        for (const claim of offer({ path: d, entries }, sources)) {
          const key = claimKey(claim);
          // A fallback claim owns no folder, so a new file in it is only seen here.
          if (!this.records.has(key) || refresh.has(key) || claim.fallback) refresh.set(key, claim);
        }
        if (d === root.path) break;
      }
    }
    for (const [key, claim] of refresh) {
      const before = this.records.get(key);
      const print = before && fingerprint(before.info);
      await this.describe(claim);
      const after = this.records.get(key);
      // Only real changes are announced (the watcher also reports touches and late adds).
      if (after && fingerprint(after.info) !== print) this.pending.changed.add(key);
      else if (!after && before) this.pending.removed.add(key);
    }
    this.flushSoon(0);
    if (refresh.size > 0) this.saveIndexSoon();
  }

  private ownerOf(changed: string): { key: string; claim: SessionClaim } | undefined {
    for (let d: string = changed, i = 0; i < 4; d = path.dirname(d), i++) {
      const key = this.folderOwner.get(d);
      const record = key ? this.records.get(key) : undefined;
      if (key && record) return { key, claim: record.claim };
      if (path.dirname(d) === d) break;
    }
    return undefined;
  }

  private flushSoon(delay: number): void {
    if (this.flushTimer || this.disposed) return;
    this.flushTimer = setTimeout(() => this.flush(), delay);
  }

  /** Announce what is pending now (one event). */
  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const { changed, removed, full } = this.pending;
    if (this.disposed || (changed.size === 0 && removed.size === 0 && !full)) return;
    this.pending = { changed: new Set(), removed: new Set(), full: false };
    for (const key of removed) changed.delete(key);
    const event: CatalogEvent = { changed: [...changed], removed: [...removed], full };
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.logger.warn(`catalog listener failed: ${(err as Error).message}`);
      }
    }
  }

  private reportOnce(message: string): void {
    if (this.reported.has(message)) return;
    this.reported.add(message);
    this.problemList.push(message);
    this.logger.warn(message);
  }
}

/** `here`, or with a check-ahead worker its verdict on line `at` (the line checked by `here` when the worker has not taken it). */
function checkedBy<E extends CheckedClaim>(ahead: BlobCheck | undefined, at: number | undefined, here: (entry: E) => boolean): (entry: E) => boolean {
  return ahead && at !== undefined ? (e) => ahead.unchanged(at, () => here(e)) : here;
}

/** Whether an entry's stamps hold (a folder this scan's walk stamped is not stat'ed again) and, with statBlobs, its blobs. */
function entryUnchanged(entry: CheckedClaim, walked: WalkedStamps | undefined, statBlobs: boolean): boolean {
  return stampsHold(entry, (file) => walked?.get(file)?.stamp) && (!statBlobs || blobsUnchanged(entry));
}

function resolveRoots(sources: Source[], options: CatalogOptions): KnownRoot[] {
  const byPath = new Map<string, KnownRoot>();
  const add = (rootPath: string, source: SourceName | '*', depth: number, origin: KnownRoot['origin'], files?: RegExp): void => {
    const resolved = path.resolve(rootPath);
    const known = byPath.get(resolved);
    if (!known) {
      byPath.set(resolved, { path: resolved, sources: source === '*' ? '*' : [source], depth, origin, exists: false, ...(files ? { files } : {}) });
      return;
    }
    known.depth = Math.max(known.depth, depth);
    if (origin === 'user') known.origin = 'user';
    if (source === '*') known.sources = '*';
    else if (known.sources !== '*' && !known.sources.includes(source)) known.sources.push(source);
    // The same folder named without a restriction (a user root, another source) lifts it.
    if (!files || !known.files) delete known.files;
    else if (files.source !== known.files.source) known.files = new RegExp(`(?:${known.files.source})|(?:${files.source})`);
  };
  if (options.useDefaultRoots !== false) {
    const dirs = envDirs(options.env ?? process.env);
    for (const source of sources) for (const spec of source.defaultRoots(dirs)) add(spec.path, source.name, spec.depth, 'default', spec.files);
  }
  for (const root of options.roots ?? []) add(root, '*', USER_ROOT_DEPTH, 'user');
  return [...byPath.values()];
}

/**
 * The blob folders an index's trailer names, for ripgrep to start on before a scan: those read whole. (A
 * folder read only for its blobs' names, in TMPDIR, waits for the scan, which gives its glob.)
 */
function wholeFolders(blobFolders: BlobFolderNames): string[] {
  const whole: string[] = [];
  for (const [folder, names] of blobFolders) if (names === undefined) whole.push(folder);
  return whole;
}

/**
 * Blobs as grep targets: those in blob folders through their folder, the rest by name. Only blobs'
 * matches are accepted (a blob folder may have gained another file).
 */
function grepTargetsOf(blobs: BlobSizes, blobFolders: BlobFolderNames, reads: RootedReads): GrepTargets {
  const folders = new Map<string, BlobFolder>();
  for (const [folder, names] of blobFolders) folders.set(folder, { path: folder, ...(names !== undefined ? { names } : {}), files: 0, bytes: 0 });
  const loose: string[] = [];
  const inFolders: Array<[string, ReadonlyMap<string, number>]> = [];
  for (const [dir, names] of blobs.byFolder()) {
    const folder = folders.get(dir);
    if (!folder) {
      for (const name of names.keys()) loose.push(childPath(dir, name));
      continue;
    }
    inFolders.push([dir, names]);
    folder.files += names.size;
    for (const bytes of names.values()) folder.bytes += bytes;
  }
  const sizeOf = (file: string): number | undefined => blobs.get(file);
  return {
    paths: loose,
    folders: [...folders.values()],
    folderFiles: () => inFolders.flatMap(([dir, names]) => [...names.keys()].map((name) => childPath(dir, name))),
    accept: (file) => sizeOf(file) !== undefined,
    sizeOf,
    reads,
  };
}

/** Whether `idOrKey` may name the session: its key, or its id or the start of it (see sessionsNamed). */
export function mayName(idOrKey: string, session: SessionInfo): boolean {
  return session.key === idOrKey || session.id.startsWith(idOrKey);
}

/** The sessions among `candidates` that `idOrKey` names: by exact key or id, else (4 characters or more) by the start of the id. */
export function sessionsNamed(idOrKey: string, candidates: readonly SessionInfo[]): SessionInfo[] {
  const exact = candidates.filter((s) => s.key === idOrKey || s.id === idOrKey);
  if (exact.length > 0 || idOrKey.length < 4) return exact;
  return candidates.filter((s) => s.id.startsWith(idOrKey));
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

/**
 * A described blob as the catalog's BlobInfo of session `sessionKey`. The
 * stored object itself becomes it: one copy of each blob in memory (blobs read
 * from the index already have both fields, so these stores add no property).
 */
function ownBlob(raw: Described['blobs'][number], sessionKey: string): BlobInfo {
  const blob = raw as BlobInfo;
  blob.key = raw.path;
  blob.sessionKey = sessionKey;
  return blob;
}

/** Visit each item in order, waiting for what a visit returns when that is a promise (a slow reader catching up). */
async function visitInTurn<T>(items: Iterable<T>, visit: (item: T) => unknown): Promise<void> {
  for (const item of items) {
    const wait = visit(item);
    if (wait instanceof Promise) await wait;
  }
}

/** A session of these blobs (sorted here, oldest first): its size and last update follow from them. */
function sessionInfo(key: string, root: string, session: Described['session'], blobs: BlobInfo[]): SessionInfo {
  blobs.sort(blobOrder);
  // Field by field, not `...session`: spreading an object JSON.parse made takes V8's slow path, which doubled
  // the time to read 50,000 sessions back from the index and left some 70 MB of garbage in the old generation.
  // Every session has one shape: fields always present, undefined when absent (as decoded blobs).
  const { source, id, title, cwd, dir, transcript, skipped, notes } = session;
  return {
    key,
    source,
    id,
    title,
    cwd,
    dir,
    transcript,
    root,
    bytes: blobs.reduce((sum, b) => sum + b.bytes, 0),
    updatedAt: isoTime(blobs.reduce((max, b) => Math.max(max, b.mtimeMs), -Infinity)),
    blobs,
    skipped,
    notes,
  };
}

/** A session in memory as listed (its blobs are in blobOrder already). */
function infoJson(info: SessionInfo): SessionJson {
  return sessionJson(info, info.blobs);
}

/** What a listener could see of a session, to tell a real change from a touch. */
function fingerprint(info: SessionInfo): string {
  return JSON.stringify([info.title, info.cwd, info.transcript, info.skipped, info.notes, info.blobs.map((b) => [b.path, b.bytes, b.mtimeMs, b.tool, b.toolCallId, b.args, b.turn, b.attribution, b.digestChars])]);
}

/** Each folder a walk went through, with its stamp as the walk took it. */
type WalkedStamps = ReadonlyMap<string, Pick<StoredListing, 'stamp'>>;

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

/** Which folder is at `p` now (device, inode and birth time: an inode number can be reused at once), undefined when none. */
function folderId(p: string): string | undefined {
  let stat;
  try {
    stat = statSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined; // unreadable: no identity, as missing
  }
  return stat?.isDirectory() ? `${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : undefined;
}

/** Why a root the user named is not scanned (a default root that is missing is simply an agent not installed). */
function notAFolder(p: string): string {
  try {
    return `root ${p}: ${statSync(p, { throwIfNoEntry: false }) ? 'not a folder' : 'no such folder'}`;
  } catch (err) {
    return `cannot read root ${p} (${(err as NodeJS.ErrnoException).code})`;
  }
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
