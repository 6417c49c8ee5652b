// The vocabulary of the spill engine: the store seam and the facts every reader needs. No I/O here.

/** Who owns a spill: the storage namespace at save time. */
export interface SpillOwner {
  sessionId: string;
}

/** Which tool call produced the content. */
export interface SpillSource {
  toolName: string;
  callId: string;
  /** Human label, e.g. the compact args (`npm test`, `src/a.ts`). */
  label: string;
}

export interface SaveTextSpill {
  owner: SpillOwner;
  source: SpillSource;
  /** A name hint; the store sanitizes it to one path segment and makes it unique. */
  suggestedName: string;
  content: string;
  /** Recorded in the manifest when known. */
  args?: unknown;
  turn?: number;
}

/** Opaque model-facing handle (a file path for the local store). */
export type SpillLocator = string & { readonly __brand: 'SpillLocator' };

export interface SpillRef {
  locator: SpillLocator;
  bytes: number;
  /** One sentence telling the model how to read more of it. */
  retrievalHint: string;
  /** sha256 (hex) of the stored bytes, when the store knows it. */
  sha256?: string;
  /** Line count of the stored text, when the store knows it. */
  lines?: number;
}

/** Alias record input: `original` is the ref an earlier save (or find) returned. */
export interface AliasSpill {
  owner: SpillOwner;
  source: SpillSource;
  original: SpillRef;
  args?: unknown;
  turn?: number;
}

/** An output too big to hold, taken whole by the store as it arrived (`SpillStore.stage`), with its facts. */
export interface StagedSpill {
  /** Where its bytes can be read back until it is saved or discarded. */
  readonly path: string;
  /** Whether the bytes are text (UTF-8 at the start, a stray invalid byte further on allowed). */
  readonly text: boolean;
  readonly bytes: number;
  readonly lines: number;
  readonly sha256: string;
}

/**
 * Where spills go. Saving is all a store must do; the rest are capabilities the policy uses when a store has
 * them (dedup by content, big outputs staged as they arrive, removal of what was staged and not kept), and
 * falls back without (an in-process dedup memory; a big output kept as it is). Every call is async and names
 * spills by locator, so a store need not be a local folder.
 */
export interface SpillStore {
  saveText(input: SaveTextSpill): Promise<SpillRef>;
  /** An earlier spill of this owner with these bytes, if the store still has it. */
  findBySha256?(owner: SpillOwner, sha256: string): Promise<SpillRef | undefined>;
  /** Records another call's output as the same bytes as `original` (no second copy). */
  recordAlias?(input: AliasSpill): Promise<SpillRef>;
  /** Runs `fn` while no other writer saves these bytes for this owner (so a lookup then save is one step). */
  withContentLock?<T>(owner: SpillOwner, sha256: string, fn: () => Promise<T>): Promise<T>;
  /** Takes an output chunk by chunk without holding it whole. */
  stage?(chunks: AsyncIterator<Buffer>): Promise<StagedSpill>;
  /** Saves what was staged (it becomes the spill). */
  saveStaged?(staged: StagedSpill, input: Omit<SaveTextSpill, 'content'>): Promise<SpillRef>;
  /** Removes what was staged and not saved. */
  discardStaged?(staged: StagedSpill): Promise<void>;
}

/** Where diagnostics go; the engine never throws into its caller. */
export interface SpillLogger {
  debug?(message: string): void;
  warn(message: string): void;
}

/** Why a save failed; `code` is an errno name (ENOSPC, EACCES, ENOTDIR, EEXIST) or a spillway one. */
export class SpillError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SpillError';
  }
}
