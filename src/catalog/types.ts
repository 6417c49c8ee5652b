// The catalog's public vocabulary: what the CLI and the VS Code extension see.
// No I/O here. Keys are stable across scans and restarts: a session key is
// `<source>:<absolute folder>`, a blob key is the blob's absolute path.

import type { SourceName } from './sources/names';

export { SOURCE_NAMES, type SourceName } from './sources/names';

/** Where a blob's tool/call facts came from. */
export type Attribution =
  /** The agent's transcript (tool_use block, persistedOutputPath, details.fullOutputPath). */
  | 'transcript'
  /** A Spillway `spillway.jsonl` manifest record. */
  | 'manifest'
  /** An agent-side index (pi-condense `context-prune-index` entries). */
  | 'index'
  /** Only the file name (e.g. gemini's `<tool>_<callId>.txt`). */
  | 'name'
  /** Nothing names it (e.g. a Claude Code `b<id>.txt` after a hook replaced the output). */
  | 'none';

/** What kind of file a blob is, as its layout says. */
export type BlobKind =
  | 'tool-result' // a tool's full result (`<tool_use_id>.txt`, a Spillway spill, ...)
  | 'tool-result-json' // Claude Code's `<tool_use_id>.json` (text blocks as pretty JSON)
  | 'shell-output' // Claude Code `b<id>.txt`, pi `pi-bash-*.log`
  | 'mcp' // Claude Code `mcp-<server>-<tool>-...`
  | 'hook' // Claude Code `hook-<id>-<hash>-<kind>.txt`
  | 'partial' // `.spillway-tmp-*`: a spill never completed (its writer killed mid-write, or still writing)
  | 'other';

export interface BlobInfo {
  /** Stable id (the absolute path); use it as a tree item id. */
  key: string;
  /** Absolute path of the file. */
  path: string;
  /** Key of the session holding it. */
  sessionKey: string;
  /** File name. */
  name: string;
  kind: BlobKind;
  /** Tool name when known (`Bash`, `Grep`, `mcp__server__tool`, ...). */
  tool?: string;
  /** The tool call id when known (`toolu_...`, a pi tool call id, ...). */
  toolCallId?: string;
  /** Compact one-line rendering of the tool's input (`npm test`, `src/a.ts`), at most 200 chars. */
  args?: string;
  /** Size in bytes at the last stat. */
  bytes: number;
  /** ISO 8601: the tool call's time when known, else the file's mtime. */
  createdAt: string;
  /** File modification time (ms since epoch), used by retention. */
  mtimeMs: number;
  /** 1-based index of the API call (turn point) that issued the tool call, when known. */
  turn?: number;
  attribution: Attribution;
  /** Bounded head of the file cut at a line boundary; filled by `Catalog.preview()` (and by scan when enabled). */
  preview?: string;
  /** True when the head holds a NUL byte or is not UTF-8; set together with `preview`. */
  binary?: boolean;
  /** Line count, filled once `Catalog.countLines()` ran for this file (cached by size+mtime). */
  lines?: number;
  /** Characters the model saw instead of the body (the digest / persisted-output notice), when the transcript says. */
  digestChars?: number;
  /**
   * 'spillway' when a Spillway manifest names the file (Spillway spilled it, not the agent), or when Spillway
   * replaced what the agent showed of a file the agent wrote (pi's bash log, by Spillway's `spillway-spill` entry).
   */
  madeBy?: 'spillway';
}

/** What a clean plan needs of a blob. */
export type CleanableBlob = Pick<BlobInfo, 'path' | 'bytes' | 'mtimeMs' | 'sessionKey'>;

/** What a clean plan needs of a session: a SessionInfo, or only this (a one-off `clean` keeps no more of each). */
export interface CleanableSession {
  key: string;
  updatedAt: string;
  transcript?: string;
  blobs: readonly CleanableBlob[];
}

export interface SessionInfo {
  /** Stable id: `<source>:<absolute folder>`; use it as a tree item id. */
  key: string;
  source: SourceName;
  /** The agent's session id (or the folder name when the layout has none). */
  id: string;
  /** A human title when the transcript has one (`summary`, `custom-title`, `ai-title`, first prompt). */
  title?: string;
  /** Working directory of the session when known (read from the transcript, never decoded from a folder name). */
  cwd?: string;
  /** The folder holding the blobs (for pi bash logs: the transcript's folder). */
  dir: string;
  /** The agent transcript, when there is one and it exists. */
  transcript?: string;
  /** The known root this session was found under. */
  root: string;
  /** Sum of the blobs' sizes. */
  bytes: number;
  /** ISO 8601 of the newest blob (or transcript) change. */
  updatedAt: string;
  blobs: BlobInfo[];
  /** Lines/files that could not be described (torn lines, malformed records, symlinks, vanished files). */
  skipped: number;
  /** Human notes about what could not be described (e.g. "transcript missing"). */
  notes: string[];
}

/** What made a turn's prompt grow: one tool result, the assistant's previous output, the user's prompt, or the rest. */
export interface TurnPart {
  kind: 'tool-result' | 'assistant' | 'user' | 'other';
  tool?: string;
  toolCallId?: string;
  /** Estimated from the characters sent (4 per token), scaled so the parts sum to the turn's growth. */
  tokens: number;
  /** A blob holds the full result (the model saw its digest: `tokens` are the digest's). */
  spilled?: boolean;
  /** The blob, when spilled. */
  path?: string;
  /**
   * The turn whose call issued the tool call (a spill's turn, BlobInfo.turn): its output grows the prompt of a
   * later call, the point this part belongs to.
   */
  turn?: number;
}

/** What shrank the context before a call. */
export interface TurnDrop {
  /** 'unexplained': the prompt shrank and the transcript does not say why. */
  kind: 'compaction' | 'pi-condense-prune' | 'spillway-flush' | 'unexplained';
  /** How much smaller the prompt is than the previous call's (0 when it still grew). */
  tokens: number;
}

/** One API call of a session. */
export interface TurnPoint {
  /** 1-based position in the series. */
  index: number;
  /** ISO 8601 of the call's first line. */
  timestamp: string;
  /** Prompt tokens P = input + cache_creation + cache_read (pi: input + cacheRead + cacheWrite). */
  promptTokens: number;
  /** P(n) - P(n-1), negative when the prompt shrank; the first point: P(1). */
  delta: number;
  /** What the growth was made of (summing to `delta` when it grew). */
  parts: TurnPart[];
  /** What shrank the context before this call, or null. */
  drop: TurnDrop | null;
  outputTokens: number;
  /** True for the first call after a compaction (the context restarted before it). */
  compaction: boolean;
  /** Keys of the blobs whose tool call this API call issued. */
  blobs: string[];
  /** The API message id (Claude Code) or entry id (pi), when known. */
  messageId?: string;
}

/**
 * Estimate of tokens Spillway kept out of the context, against what the agent
 * would have shown without it (Claude Code: its own 2 KB preview for an output
 * over 30,000 chars, else the whole output; pi: at most 50 KB). Blobs the agent
 * spilled itself are not counted: Spillway changed nothing there.
 */
export interface TokensSaved {
  /** The assumption used to turn chars into tokens. */
  charsPerToken: number;
  /** Sum over Spillway's blobs of (baseline tokens - digest tokens) x calls that re-sent them. */
  tokens: number;
  /** How much smaller the context is at the last call: the same difference, for the blobs still in it. */
  contextTokens: number;
  /** Calls that carried at least one of Spillway's digests instead of the baseline. */
  calls: number;
  /** Blobs the agent spilled itself (not counted). */
  agentSpills: number;
  /** Per blob, only those with a known turn. */
  blobs: Array<{
    key: string;
    bodyTokens: number;
    /** What the agent would have shown without Spillway; 0 saved for the agent's own spills. */
    baselineTokens: number;
    /** Spillway made this blob (only these count). */
    counted: boolean;
    digestTokens: number;
    /** API calls after the one that issued it, until the next compaction or the session end. */
    resentTurns: number;
    saved: number;
    /** Whether digestTokens came from the transcript or from the default digest size. */
    digestKnown: boolean;
  }>;
  /** Blobs left out because their turn is unknown. */
  blobsWithoutTurn: number;
}

/** A blob as the turn series sees it: when it was made and whether the model read it back. */
export interface BlobUse {
  key: string;
  path: string;
  tool?: string;
  toolCallId?: string;
  turn?: number;
  bytes: number;
  /**
   * Later tool calls that fetched the blob back: their input names its path (a Read, a `sed -n` or grep in a
   * Bash command) or its id (pi-condense's context_tree_query).
   */
  readBack: number;
  /** Each of those: the turn of the call that issued it, and the tokens its result added (when known). */
  reads?: BlobRead[];
  /** Who spilled it: Spillway (a manifest names it) or the agent itself. */
  madeBy: 'spillway' | 'agent';
}

export interface BlobRead {
  turn: number;
  toolCallId: string;
  tokens?: number;
}

export interface TurnSeries {
  sessionKey: string;
  points: TurnPoint[];
  blobs: BlobUse[];
  compactions: number;
  tokensSaved: TokensSaved;
  /** Transcript lines that could not be read. */
  skipped: number;
}

/** A line range read without loading the whole file. */
export interface SliceResult {
  path: string;
  /** First line returned (1-based). */
  startLine: number;
  /** Last line returned (1-based, inclusive); < startLine when nothing was returned. */
  endLine: number;
  /** The lines joined with '\n' (no trailing newline). */
  text: string;
  /** True when the file ended before the requested end line. */
  eof: boolean;
  /** With eof: the file's last line (0 when it is empty). */
  lastLine?: number;
  /** True when `maxBytes` cut the text. */
  truncated: boolean;
}

export interface GrepOptions {
  pattern: string;
  /** Treat the pattern as a regular expression (default: literal). */
  regex?: boolean;
  ignoreCase?: boolean;
  /** Like ripgrep's --smart-case: case-insensitive unless the pattern holds an uppercase letter. */
  smartCase?: boolean;
  /** At most this many matches per blob (0 or unset: no cap); blobs cut are named in the summary. */
  maxPerBlob?: number;
  /** Node engine, regex patterns: budget for one chunk of lines, ms (default 5000); over it the file is reported and skipped. */
  regexTimeoutMs?: number;
  /** Files to search; default: every non-binary blob of the catalog. */
  paths?: string[];
  /** Stop after this many matches (default 1000). */
  maxResults?: number;
  /** Clip each line's text to this many chars (default 300). */
  maxLineChars?: number;
  /** 'auto' (default): ripgrep when found, else Node. */
  engine?: 'auto' | 'rg' | 'node';
  /** Explicit ripgrep binary (e.g. the one VS Code ships); otherwise `rg` on PATH. */
  rgPath?: string;
  /**
   * Node engine, case-sensitive literals: a worker thread searches the files from the last one back when they hold
   * `minBytes` or more in all (default 128 MB; `workerFile`: dist/grep-ahead-worker.js); false: one thread.
   */
  searchAhead?: { workerFile?: string; minBytes?: number } | false;
}

export interface GrepMatch {
  path: string;
  /** 1-based line number. */
  line: number;
  /** The line (without its '\n'), clipped to maxLineChars. */
  text: string;
}

export interface GrepProgress {
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  matches: number;
}

export interface GrepSummary {
  matches: number;
  /** Stopped at maxResults. */
  truncated: boolean;
  /** Blobs that had more than maxPerBlob matches (only the first maxPerBlob were reported). */
  cappedBlobs?: string[];
  cancelled: boolean;
  engine: 'rg' | 'node';
  /** Files that could not be read (vanished, unreadable). */
  errors: Array<{ path: string; message: string }>;
}

/** What to clean. */
export type CleanRequest =
  | { kind: 'blobs'; paths: string[] }
  | { kind: 'session'; sessionKey: string }
  | {
      kind: 'retention';
      /** Delete blobs whose mtime is older than now - olderThanMs. */
      olderThanMs?: number;
      /** Then delete oldest first until the total is at most this many bytes. */
      maxTotalBytes?: number;
      /** For tests; default Date.now(). */
      now?: number;
    };

export interface CleanItem {
  path: string;
  bytes: number;
  sessionKey: string;
  mtimeMs: number;
}

export interface CleanPlan {
  request: CleanRequest;
  items: CleanItem[];
  /** Sum of items' bytes. */
  bytes: number;
  /** Paths that will not be deleted, and why (outside the roots, symlink, unknown). */
  refused: Array<{ path: string; reason: string }>;
}

export interface CleanResult {
  deleted: CleanItem[];
  bytes: number;
  failed: Array<{ path: string; reason: string }>;
  /** Manifests rewritten without the records of deleted files. */
  manifestsRewritten: string[];
  /** Blob-only folders (`tool-results/`, `<id>-blobs/`) removed once emptied. */
  foldersRemoved?: string[];
}

export interface CleanExecuteOptions {
  /** Move a file to the OS trash instead of unlinking it (the extension passes vscode.workspace.fs.delete with useTrash). */
  trash?: (path: string) => Promise<void>;
}

/** Fired (coalesced) when sessions change; never carries the data itself. */
export interface CatalogEvent {
  /** Sessions that appeared or whose blobs/metadata changed. */
  changed: string[];
  /** Sessions that are gone. */
  removed: string[];
  /** True after a full scan: consumers should re-read everything. */
  full: boolean;
}

export interface CatalogLogger {
  debug?(message: string): void;
  warn(message: string): void;
}

export interface CatalogOptions {
  /** Extra folders scanned with every source's shape detection. */
  roots?: string[];
  /** Include each source's default roots from the environment (default true). */
  useDefaultRoots?: boolean;
  /** Only these sources (default: all). */
  sources?: SourceName[];
  /** Environment for default roots (HOME, CLAUDE_CONFIG_DIR, ...); default process.env. */
  env?: NodeJS.ProcessEnv;
  logger?: CatalogLogger;
  /** Read each blob's bounded head during scan (default false: previews are read on demand by `preview()`). */
  previewOnScan?: boolean;
  /** Coalescing window for live events in ms (default 75). */
  coalesceMs?: number;
  /** How long a written file must stay unchanged before it is read, ms (default 150). */
  settleMs?: number;
  /** While watching, how often missing roots are checked for having appeared, ms (default 5000). */
  rootPollMs?: number;
  /**
   * Folder of the persistent index (e.g. `defaultCacheDir()`): sessions unchanged since it
   * stored them are not described again. Unset: no index is read or written.
   */
  cacheDir?: string;
  /** While watching, how long after a change the index is written, ms (default 2000). */
  indexSaveMs?: number;
}

/** A root the catalog scans, and for which sources. */
export interface KnownRoot {
  path: string;
  /** Sources whose shapes are looked for under it ('*' = all). */
  sources: SourceName[] | '*';
  /** How deep below it folders are walked. */
  depth: number;
  /** Whether it came from the environment defaults or the user. */
  origin: 'default' | 'user';
  /** A shared folder (TMPDIR): only files directly in it whose name matches may be deleted. */
  files?: RegExp;
  exists: boolean;
}

/** Disposable returned by onDidChange. */
export interface Disposable {
  dispose(): void;
}
