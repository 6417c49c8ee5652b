// The seam every agent layout implements: default roots, shape recognition
// (claim a folder), and description (blobs + session facts).
import type { Dirent } from 'node:fs';
import type { BlobInfo, CatalogLogger, SessionInfo, SourceName } from '../types';
import type { EnvDirs } from './roots';
import type { TranscriptCache } from '../transcripts/transcripts';
import type { ApiCall } from '../transcripts/calls';
import type { LineReducer } from '../transcripts/transcripts';
import type { ManifestRecord } from '../../spill/manifest';

/** What a blob takes from its stat. */
export interface FileStat {
  size: number;
  mtimeMs: number;
}

export interface DirListing {
  path: string;
  entries: Dirent[];
}

export interface RootSpec {
  path: string;
  /** Folders below it that are walked (0 = only the root's own listing). */
  depth: number;
  /**
   * For a folder shared with everything else (TMPDIR): only files directly in
   * it whose name matches may ever be deleted, and no manifest in it is rewritten.
   */
  files?: RegExp;
}

/** A folder (or file group) a source recognised as one session. */
export interface SessionClaim {
  source: SourceName;
  /** The session's folder (part of its key). */
  dir: string;
  /** Sub-folders this claim owns: the walker does not descend into them. */
  owns: string[];
  /** Source-specific facts found while claiming (e.g. the transcript path). */
  hint?: Record<string, string>;
  /**
   * Lists only files no other session names (e.g. pi bash logs of no session):
   * a blob that a regular session also lists belongs to that session.
   */
  fallback?: boolean;
}

export interface DescribeContext {
  transcripts: TranscriptCache;
  logger: CatalogLogger;
  root: string;
  /**
   * Why a file named from outside its session's folders (e.g. a path in a
   * transcript) is no blob: outside the known roots, not one of the agent's
   * files in a shared folder, reached through a symlink, not a regular file
   * with one link, missing. Undefined when clean could delete it, so it may be listed.
   */
  refusal(file: string): Promise<string | undefined>;
  /** The description is for a listing (list, grep, clean): its calls may leave out what only `turns` shows (see forListing). */
  listing?: boolean;
}

/** A described session before the catalog fills keys of blobs and totals. */
export interface Described {
  session: Omit<SessionInfo, 'key' | 'bytes' | 'updatedAt' | 'blobs' | 'root'>;
  blobs: Array<Omit<BlobInfo, 'key' | 'sessionKey'>>;
  /** Files (transcripts, manifests, logs outside the folder) whose change must refresh this session. */
  dependsOn: string[];
  /** The session's main-chain API calls, in order (for turns). */
  calls?: ApiCall[];
  /**
   * Folders in which every regular file but Spillway's manifests is one of
   * this session's blobs: grep hands them to ripgrep whole instead of file by file.
   */
  blobFolders?: string[];
  /**
   * With blobFolders: a glob (ripgrep's) the names of those blobs match, for folders other programs
   * share (TMPDIR's): every regular file so named is a blob, and ripgrep reads only those.
   */
  blobNames?: string;
}

export interface Source {
  name: SourceName;
  defaultRoots(dirs: EnvDirs): RootSpec[];
  /** Claims found in `dir` (the folder itself or its children); `parent` is the parent's listing when walked. */
  claim(dir: DirListing): SessionClaim[];
  /** Describe a claim; undefined when it no longer holds anything. */
  describe(claim: SessionClaim, ctx: DescribeContext): Promise<Described | undefined>;
  /** How a session of this agent copied to an object store is read (its transcript's copy, its blobs' records). */
  remote?: RemoteReading;
}

/**
 * A session in an object store (PREFIX/AGENT/SESSION/: each blob keyed by its content, its manifest record
 * beside it, and the transcript's copy): what a source needs to give the answers it gives for the folder.
 */
export interface RemoteReading<S = unknown> {
  /** Parses the transcript's copy, as the folder's transcript is parsed. */
  reducer: LineReducer<S>;
  /** The session's facts and main-chain API calls, from the parsed transcript. */
  session(state: S): { id?: string; title?: string; cwd?: string; calls: ApiCall[] };
  /**
   * A blob: `path` its URL, `name` its local file name (from its record: how the transcript names it),
   * attributed to its tool call as in the folder; `state` undefined when the transcript did not travel.
   */
  blob(file: { path: string; name: string }, stat: FileStat, record: ManifestRecord | undefined, state: S | undefined): Described['blobs'][number];
}

/** A source's reading with its state type erased (each source's state is its own). */
export function remoteReading<S>(reading: RemoteReading<S>): RemoteReading {
  return reading as unknown as RemoteReading;
}

const keys = new WeakMap<SessionClaim, string>();

/** `source:dir`, made once per claim object (claims are never changed): 50,000 sessions held three copies of each. */
export function claimKey(claim: SessionClaim): string {
  let key = keys.get(claim);
  if (key === undefined) keys.set(claim, (key = `${claim.source}:${claim.dir}`));
  return key;
}
