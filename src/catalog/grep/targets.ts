// What a search is given (targets, resolved options) and its state while it runs, shared by both engines.

import type { FileSearchRun } from './grep-file';
import type { ReadAnchor } from '../read/rooted-read';
import type { GrepOptions, GrepProgress, GrepSummary } from '../types';

export type Resolved = Required<Pick<GrepOptions, 'pattern' | 'regex' | 'ignoreCase' | 'maxResults' | 'maxLineChars'>> & {
  paths: string[];
  /** 0: no per-blob cap. */
  maxPerBlob: number;
  regexTimeoutMs: number | undefined;
  searchAhead: GrepOptions['searchAhead'];
};

/**
 * What to search: files by name and, for ripgrep, whole folders whose every
 * regular file (but Spillway's manifests) is a blob. `accept` keeps a match
 * only when its file is one the caller knows (folders may gain other files).
 */
export interface GrepTargets {
  paths: string[];
  folders?: BlobFolder[];
  /** The blobs in those folders, searched by name by the Node engine (made only for it). */
  folderFiles?: () => string[];
  accept?: (file: string) => boolean;
  /** The size the caller knows for a file, for progress (else each file is stat'ed). */
  sizeOf?: (file: string) => number | undefined;
  /** How files and folders are reached (default: as named). */
  reads?: ReadAnchor;
}

/** A folder of blobs, with what it holds as far as the caller knows (for progress). */
export interface BlobFolder {
  path: string;
  /** A glob the blobs' names match: only files so named are read (a folder shared with other programs). */
  names?: string;
  files: number;
  bytes: number;
}

/** Blob folders, each with the glob its blobs' names match (undefined: every file but the manifests). */
export type BlobFolderNames = Map<string, string | undefined>;

/** One search in progress, shared by both engines. */
export interface GrepRun extends FileSearchRun {
  options: Resolved;
  sizes: number[];
  summary: GrepSummary;
  progress: GrepProgress;
  signal: AbortSignal | undefined;
  onProgress: ((p: GrepProgress) => void) | undefined;
}
