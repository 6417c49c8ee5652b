// The catalog: every agent's spill sessions -> blobs, kept live.
import type {
  BlobInfo,
  CatalogEvent,
  CatalogOptions,
  CleanExecuteOptions,
  CleanPlan,
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
  TurnSeries,
} from './types';
import type { SliceOptions } from './slice';

export class Catalog {
  constructor(private readonly options: CatalogOptions = {}) {}

  /** Walk every known root and describe every session (replaces the previous state; fires one `full` event). */
  async scan(): Promise<void> {
    throw new Error('not implemented yet');
  }

  /** All sessions, newest first. */
  sessions(): SessionInfo[] {
    return [];
  }

  /** One session by key. */
  session(key: string): SessionInfo | undefined {
    void key;
    return undefined;
  }

  /** Sessions whose key, agent session id, or id prefix (>= 4 chars) matches. */
  findSessions(idOrKey: string): SessionInfo[] {
    void idOrKey;
    return [];
  }

  /** One blob by key (its absolute path). */
  blob(key: string): BlobInfo | undefined {
    void key;
    return undefined;
  }

  /** Total lines/files skipped while describing (torn lines, symlinks, ...). */
  skipped(): number {
    return 0;
  }

  /** Problems met while scanning (unreadable roots, each reported once). */
  problems(): string[] {
    return [];
  }

  /** The roots scanned (defaults that exist plus user roots). Deletion never leaves them. */
  knownRoots(): KnownRoot[] {
    return [];
  }

  /** Listen for coalesced changes. */
  onDidChange(listener: (event: CatalogEvent) => void): Disposable {
    void listener;
    return { dispose: () => undefined };
  }

  /** Start watching the roots (chokidar); resolves once the watchers are ready. */
  async watch(): Promise<void> {
    throw new Error('not implemented yet');
  }

  /** Stop watching and drop listeners. */
  async dispose(): Promise<void> {}

  /** Bounded head of a blob (cut at a line boundary) and binary flag; cached on the BlobInfo. */
  async preview(key: string): Promise<{ preview: string; binary: boolean }> {
    void key;
    throw new Error('not implemented yet');
  }

  /** Line count of a file, cached by (size, mtime); also stored on the BlobInfo. */
  async countLines(path: string): Promise<number> {
    void path;
    throw new Error('not implemented yet');
  }

  /** Lines startLine..endLine (1-based, inclusive) of any file, without loading it. */
  async readSlice(path: string, startLine: number, endLine: number, options?: SliceOptions): Promise<SliceResult> {
    void path; void startLine; void endLine; void options;
    throw new Error('not implemented yet');
  }

  /** Grep blobs (all non-binary blobs unless options.paths is given). */
  async grep(
    options: GrepOptions,
    onMatch: (match: GrepMatch) => void,
    signal?: AbortSignal,
    onProgress?: (progress: GrepProgress) => void,
  ): Promise<GrepSummary> {
    void options; void onMatch; void signal; void onProgress;
    throw new Error('not implemented yet');
  }

  /** What a clean request would delete (nothing is touched). */
  async planClean(request: CleanRequest): Promise<CleanPlan> {
    void request;
    throw new Error('not implemented yet');
  }

  /** Delete (or trash) a plan's items after re-checking each; manifests and the catalog follow. */
  async executeClean(plan: CleanPlan, options?: CleanExecuteOptions): Promise<CleanResult> {
    void plan; void options;
    throw new Error('not implemented yet');
  }

  /** Per-turn context series of a session, with the tokens-saved estimate. */
  async turnsFor(sessionKey: string): Promise<TurnSeries | undefined> {
    void sessionKey;
    throw new Error('not implemented yet');
  }
}
