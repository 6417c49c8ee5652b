// The vocabulary of the spill engine (seed 001's store seam, extended with the
// manifest facts every reader needs). No I/O here.

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

export interface SpillStore {
  saveText(input: SaveTextSpill): Promise<SpillRef>;
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
