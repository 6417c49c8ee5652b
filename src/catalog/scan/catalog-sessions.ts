// The sessions a catalog holds: its roots and sources, each session as described or taken from the index,
// the blobs by key, who depends on which file, and the events that announce changes.

import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isInternalName, isTempName } from '../../spill/internal-names';
import { type BlobFolderNames, type GrepTargets } from '../grep/grep';
import { indexFileFor, saveIndex, type CheckedClaim, type IndexedClaim, type LoadedIndex, type StoredListing, type WalkListing } from '../index/index-file';
import { CatalogWatcher } from '../live/watcher';
import { RootedReads } from '../read/rooted-read';
import { sourcesNamed } from '../sources/index';
import { envDirs } from '../sources/roots';
import { claimKey, type SessionClaim, type Source } from '../sources/source';
import type { ApiCall } from '../transcripts/calls';
import { TranscriptCache } from '../transcripts/transcripts';
import type { BlobInfo, CatalogEvent, CatalogLogger, CatalogOptions, Disposable, KnownRoot, SessionInfo, SourceName } from '../types';
import { describeClaim, rootOf } from './describe';
import { BlobSizes, newestFirst } from './settled';
import { offer } from './walk';
import { grepTargetsOf, wholeFolders } from '../grep/blob-targets';
import { fingerprint, ownBlob, sessionInfo, sessionsNamed } from './session-info';

/** Depth walked below a user-given root (any layout may sit a few levels down). */
const USER_ROOT_DEPTH = 6;
interface SessionRecord {
  claim: SessionClaim;
  info: SessionInfo;
  /** Undefined when taken from the index: turnsFor() describes the session again. */
  calls: ApiCall[] | undefined;
  dependsOn: string[];
  /** What the index stores for it. */
  indexed: IndexedClaim;
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
   * The listing will be printed as `list --json` prints it (SessionListing.forEachJson): a session's listed part
   * short enough is kept as checking its index line reads it, not read again when printed (see IndexLines.checked).
   */
  keepListed?: boolean;
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
export function pacer(): (work: number) => Promise<void> | undefined {
  let done = 0;
  return (work) => {
    done += work;
    if (done < STAMPS_PER_YIELD) return undefined;
    done = 0;
    return new Promise((resolve) => setImmediate(resolve));
  };
}

const quietLogger: CatalogLogger = { warn: () => undefined };
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

/** Each folder a walk went through, with its stamp as the walk took it. */
export type WalkedStamps = ReadonlyMap<string, Pick<StoredListing, 'stamp'>>;

/** What every part of the catalog shares: the sessions it holds and how one is described and put in place. */
export abstract class CatalogSessions {
  protected readonly sources: Source[];
  protected readonly roots: KnownRoot[];
  protected readonly logger: CatalogLogger;
  protected readonly transcripts = new TranscriptCache();
  protected readonly records = new Map<string, SessionRecord>();
  /** Claims that hold nothing (kept for the index, so they are not described again). */
  protected readonly emptyClaims = new Map<string, IndexedClaim>();
  /** Blob key -> the blob (its sessionKey names the owner). */
  protected readonly blobMap = new Map<string, BlobInfo>();
  protected readonly indexFile: string | undefined;
  /** The index already read (by showIndexed() or scanAndGrep()): the next scan checks it instead of reading it again. */
  protected loadedIndex: LoadedIndex | undefined;
  /** showIndexed() reading the rest of the index after the newest sessions. */
  protected indexLoading: Promise<void> | undefined;
  /** The last scan's folder listings, saved with the index so the next walk lists only folders that changed. */
  protected walked: { listings: ReadonlyMap<string, WalkListing>; walkedAt: number } = { listings: new Map(), walkedAt: 0 };
  /**
   * While a scan describes what its walk found: the stamps that walk took before listing each folder. A session's
   * own folder is then not stat'ed again to be stamped (a stamp taken before the description reads it is what it needs).
   */
  protected scanStamps: WalkedStamps | undefined;
  protected indexSave: NodeJS.Timeout | undefined;
  protected lastScan: ScanStats = { described: 0, reused: 0, indexLoaded: false, transcriptBytes: 0, foldersListed: 0, checkedAhead: 0, describedAhead: 0 };
  /** Transcript/manifest/log path -> keys of sessions that read it. */
  protected readonly dependents = new Map<string, Set<string>>();
  /** Claimed folder or owned sub-folder -> session key. */
  protected readonly folderOwner = new Map<string, string>();
  protected readonly listeners = new Set<(event: CatalogEvent) => void>();
  protected readonly reported = new Set<string>();
  protected readonly problemList: string[] = [];
  protected pending = { changed: new Set<string>(), removed: new Set<string>(), full: false };
  protected flushTimer: NodeJS.Timeout | undefined;
  protected watcher: CatalogWatcher | undefined;
  protected rootPoll: NodeJS.Timeout | undefined;
  /** Each watched root's folder (folderId; undefined: missing), to tell when it is removed or made again. */
  protected readonly watchedRoots = new Map<string, string | undefined>();
  protected checkingRoots = false;
  protected disposed = false;
  /** Reads of blobs, refused when a folder below a root was swapped for a symlink. */
  protected readonly reads: RootedReads;

  constructor(protected readonly options: CatalogOptions = {}) {
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

  /** Every blob as grep targets: whole folders where a layout has them, the rest by name; only known blobs are accepted. */
  protected grepTargets(): GrepTargets {
    const sizes = new BlobSizes();
    for (const blob of this.blobMap.values()) sizes.addPath(blob.path, blob.bytes);
    return grepTargetsOf(sizes, this.blobFolders(), this.reads);
  }

  /** Folders whose every regular file (but manifests; of those named so, given a glob) is a blob, as the sources described them. */
  protected blobFolders(): BlobFolderNames {
    const folders: BlobFolderNames = new Map();
    for (const { indexed } of this.records.values()) for (const folder of indexed.described?.blobFolders ?? []) folders.set(folder, indexed.described!.blobNames);
    return folders;
  }

  // ---- internals -------------------------------------------------------

  protected sourcesFor(root: KnownRoot): Source[] {
    return root.sources === '*' ? this.sources : this.sources.filter((s) => (root.sources as SourceName[]).includes(s.name));
  }

  protected allBlobs(): BlobInfo[] {
    return [...this.records.values()].flatMap((r) => r.info.blobs);
  }

  protected rootOf(target: string): KnownRoot | undefined {
    return rootOf(this.roots, target);
  }

  /** Describe one claim and put (or drop) its session, then the fallback sessions it affects; returns its key. */
  protected async describe(claim: SessionClaim): Promise<string> {
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
  protected async describeOne(claim: SessionClaim, keepCalls = !!this.watcher): Promise<Set<string>> {
    const { indexed, calls } = await this.describeClaim(claim);
    if (!indexed.described) {
      this.drop(claimKey(claim));
      this.emptyClaims.set(claimKey(claim), indexed);
      return new Set();
    }
    return this.install(claim, indexed, keepCalls ? calls ?? [] : undefined);
  }

  /** The stamp the running scan's walk took of `folder` before listing it; undefined outside a scan, or for a folder it did not list. */
  protected walkStamp(folder: string): string | undefined {
    return this.scanStamps?.get(folder)?.stamp;
  }

  /**
   * What a claim's source describes now, with the stamps that tell later whether it still holds (described null: it
   * holds nothing). `listing`: for a streaming scan's listing, its calls not for `turns` (see forListing).
   */
  protected async describeClaim(claim: SessionClaim, listing = false): Promise<{ indexed: IndexedClaim; calls?: ApiCall[] }> {
    const stamped = (folder: string): string | undefined => this.walkStamp(folder);
    const described = await describeClaim(claim, { sources: this.sources, roots: this.roots, transcripts: this.transcripts, logger: this.logger, keepTranscripts: !!this.watcher, stamped, listing });
    if (described.problem) this.reportOnce(described.problem);
    return described;
  }

  /**
   * Whether a stored description still holds: the same claim, and `unchanged` (its stamps, and its blobs' sizes and
   * mtimes unless a scan skips them). A folder this scan's walk stamped (a session's own) is not stat'ed again.
   */
  protected stillHolds<E extends CheckedClaim>(entry: E, claim: SessionClaim, unchanged: (entry: E) => boolean): boolean {
    // A walk that recalled the folder hands back the index's own claim object: no need to compare it field by field.
    return (entry.claim === claim || JSON.stringify(entry.claim) === JSON.stringify(claim)) && this.blobsAsDescribed(entry) && unchanged(entry);
  }

  /**
   * Whether every blob an entry names lies below a known root, in a folder its description stamped (describing
   * stamps each blob's folder; a file named by its transcript, such as pi's log, is stamped itself). An index
   * edited by hand could name any file, the session's own transcript included, for `clean` to delete.
   */
  protected blobsAsDescribed(entry: CheckedClaim): boolean {
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
      if (blob.path === transcript || (isInternalName(name) && !isTempName(name)) || name.includes(path.sep) || name === '..' || name === '.') return false;
      if (folder === checked) continue; // a session's blobs come folder by folder
      if (!path.isAbsolute(blob.path) || !this.rootOf(folder)) return false;
      if (stamped.has(folder)) checked = folder;
      else if (!stamped.has(blob.path)) return false;
    }
    return true;
  }

  /** Put a described session in place (dropping what it held before); returns the fallback sessions it took blobs from. */
  protected install(claim: SessionClaim, indexed: IndexedClaim, calls: ApiCall[] | undefined): Set<string> {
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

  protected drop(key: string): void {
    const record = this.records.get(key);
    if (!record) return;
    this.records.delete(key);
    for (const blob of record.info.blobs) if (this.blobMap.get(blob.key)?.sessionKey === key) this.blobMap.delete(blob.key);
    for (const dep of record.dependsOn) this.dependents.get(dep)?.delete(key);
    for (const folder of [record.claim.dir, ...record.claim.owns]) if (this.folderOwner.get(folder) === key) this.folderOwner.delete(folder);
  }

  /** Write the index now (a failure is logged: it is only a cache). */
  protected async saveIndexNow(): Promise<void> {
    if (!this.indexFile) return;
    try {
      const entries = [...[...this.records.values()].map((r) => r.indexed), ...this.emptyClaims.values()];
      await saveIndex(this.indexFile, entries, { blobFolders: wholeFolders(this.blobFolders()), ...this.walked });
    } catch (err) {
      this.indexNotWritten(err);
    }
  }

  /** The index is only a cache: a failure to write it (a full disk) is reported once, and everything goes on without it. */
  protected indexNotWritten(err: unknown): void {
    this.reportOnce(`cannot write the catalog index ${this.indexFile}: ${(err as Error).message}`);
  }

  protected flushSoon(delay: number): void {
    if (this.flushTimer || this.disposed) return;
    this.flushTimer = setTimeout(() => this.flush(), delay);
  }

  /** Announce what is pending now (one event). */
  protected flush(): void {
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

  protected reportOnce(message: string): void {
    if (this.reported.has(message)) return;
    this.reported.add(message);
    this.problemList.push(message);
    this.logger.warn(message);
  }
}