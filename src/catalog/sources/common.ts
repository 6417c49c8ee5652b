// Helpers shared by the source modules: list a folder's files with their
// stats (symlinks reported, never followed) and index manifest records.
import { lstatSync, readdirSync, type Dirent, type Stats } from 'node:fs';
import * as path from 'node:path';
import { isInternalName } from '../../spill/internal-names';
import { refusedKind } from '../../spill/regular-file';
import { childPath } from '../shared/child-path';
import { MANIFEST_NAME, readManifest, type ManifestRecord } from '../../spill/manifest';
import { compactArgs } from '../../common/one-line';
import type { Described, FileStat, Source } from './source';
export type { FileStat } from './source';
import type { SourceName } from '../types';
import { isoTime } from '../../spill/iso-time';
import { ownedByAnother } from '../../spill/private-folder';

export interface FileFacts {
  path: string;
  name: string;
  /** True for a symlink (never followed, never a blob). */
  symlink: boolean;
  /**
   * What a blob takes from its stat (not the Stats object: four Dates and a dozen numbers
   * per file, 100,000 of them held at once for one large session). Undefined for symlinks,
   * hard-linked files and files that vanished between readdir and stat.
   */
  stat?: FileStat;
}

/**
 * Regular files, symlinks and special files (no `stat`) directly in `dir` (empty when it is missing,
 * unreadable, or itself a symlink).
 * With `ownOnly` (a shared folder: TMPDIR) a file another user owns is refused as a hard link is (no `stat`).
 */
export async function listFiles(dir: string, opts: { ownOnly?: boolean } = {}): Promise<FileFacts[]> {
  let entries;
  try {
    // readdir follows a symlinked folder: its files lie elsewhere and are no session's blobs.
    // Synchronous, as the stats below: the thread-pool round trips cost more than these calls (a walk's worth per scan).
    // A missing folder is common (most sessions have no subagents/): no exception to build for it.
    const stat = lstatSync(dir, { throwIfNoEntry: false });
    // A symlink in the folder's place leads elsewhere: nothing through it is listed, and it counts as one skipped entry.
    if (stat?.isSymbolicLink()) return [{ path: dir, name: path.basename(dir), symlink: true }];
    if (!stat?.isDirectory()) return [];
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    // Gone meanwhile: nothing to list. Unreadable: its session cannot be described now (an empty listing
    // stored as its description would hide its blobs for good); describeClaim says so and tries again next scan.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw new Error(`cannot read ${dir} (${code ?? (err as Error).message})`);
  }
  const facts: FileFacts[] = [];
  for (const e of entries) {
    if (e.isDirectory()) continue;
    const file = childPath(dir, e.name);
    // A FIFO, socket or device where a blob could be: never read, counted as skipped where its name is a blob's.
    if (!e.isFile() && !e.isSymbolicLink()) {
      facts.push({ path: file, name: e.name, symlink: false });
      continue;
    }
    if (e.isSymbolicLink()) {
      facts.push({ path: file, name: e.name, symlink: true });
      continue;
    }
    const stat = lstatQuiet(file);
    // A file with other hard links is no blob either: its other name may lie anywhere.
    const refused = !stat || refusedKind(stat) || (opts.ownOnly && notOurs(stat));
    facts.push({ path: file, name: e.name, symlink: false, stat: refused ? undefined : { size: stat.size, mtimeMs: stat.mtimeMs } });
  }
  return facts;
}

/**
 * For a session left with no blob: the error that says its blob folder is a symlink, when `listed` (listFiles of
 * `folder`) found one there. Thrown, it is reported and the session described again next scan; otherwise the
 * session would vanish unexplained.
 */
export function symlinkedFolder(folder: string, listed: readonly FileFacts[] | undefined): Error | undefined {
  return listed?.some((file) => file.symlink && file.path === folder) ? new Error(`${folder} is a symlink, never followed`) : undefined;
}

/**
 * Why a file or folder in a shared folder (TMPDIR) is no agent output of yours, or undefined: anyone can
 * make one with an agent's output name there. A folder must be yours and not writable by others.
 */
export function notOurs(stat: Pick<Stats, 'uid' | 'mode' | 'isDirectory'>): string | undefined {
  if (typeof process.getuid !== 'function') return undefined;
  if (ownedByAnother(stat)) return 'owned by another user';
  if (stat.isDirectory() && (stat.mode & 0o002) !== 0) return 'writable by others';
  return undefined;
}

function lstatQuiet(file: string): Stats | undefined {
  try {
    return lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** Add `records` of the manifest in `folder` to `into`, keyed by the blob's absolute path (first record wins). */
export function manifestIndex(folder: string, records: ManifestRecord[], into: Map<string, ManifestRecord>): void {
  for (const record of records) {
    const file = path.resolve(folder, record.file);
    if (!into.has(file)) into.set(file, record);
  }
}

/**
 * The Spillway manifest in `folder`: its records, and 1 skipped when something of its name could not be read
 * as one. Nothing of that name (most blob folders): nothing is opened (a failing open left the scan idle).
 * Anything else there (a FIFO, a symlink) is tried,
 * refused and counted. `listed`: the folder's listing when the caller has it (then no lstat asks).
 */
export async function folderManifest(folder: string, listed?: readonly FileFacts[]): Promise<{ records: ManifestRecord[]; skipped: number }> {
  const there = listed ? listed.some((f) => f.name === MANIFEST_NAME) : !!lstatQuiet(path.join(folder, MANIFEST_NAME));
  if (!there) return { records: [], skipped: 0 };
  return readManifest(folder).catch(() => ({ records: [], skipped: 1 }));
}

/**
 * Describe a folder whose blobs a Spillway manifest names (the engine's own
 * sessions, and adapters' folders other layouts own). Files the manifest
 * does not name are listed unattributed.
 */
export async function describeManifestFolder(
  folder: string,
): Promise<{ blobs: Described['blobs']; skipped: number; sessionId?: string; hasManifest: boolean; listed: FileFacts[]; manifest: string }> {
  const listed = await listFiles(folder);
  const manifest = await folderManifest(folder, listed);
  const records = new Map<string, ManifestRecord>();
  manifestIndex(folder, manifest.records, records);
  let skipped = manifest.skipped;
  const blobs: Described['blobs'] = [];
  for (const file of listed) {
    if (isInternalName(file.name)) continue;
    if (file.symlink || !file.stat) {
      skipped++;
      continue;
    }
    const record = records.get(file.path);
    blobs.push({
      path: file.path,
      name: file.name,
      kind: 'tool-result',
      tool: record?.tool,
      toolCallId: record?.toolCallId || undefined,
      args: record ? (compactArgs(record.args) || undefined) : undefined,
      bytes: file.stat.size,
      createdAt: record?.createdAt || isoTime(file.stat.mtimeMs),
      mtimeMs: file.stat.mtimeMs,
      turn: record?.turn,
      attribution: record ? 'manifest' : 'none',
    });
  }
  // `manifest` is a dependency of the description: a record appended to it changes no folder's stamp.
  return { blobs, skipped, sessionId: manifest.records[0]?.sessionId, hasManifest: manifest.records.length > 0 || manifest.skipped > 0, listed, manifest: path.join(folder, MANIFEST_NAME) };
}

/**
 * `[folder]` as a blob folder (grep hands it to ripgrep whole, not file by file) when each regular file its
 * listing holds (symlinks and Spillway's own files aside; only those `named` matches, when given) is one of
 * the session's blobs, `blobs` of which come from it; else none (a hard-linked file, or one the source
 * leaves out, keeps it file by file).
 */
export function wholeFolder(folder: string, listed: readonly FileFacts[], blobs: number, named?: RegExp): string[] | undefined {
  let regular = 0;
  for (const file of listed) if (!file.symlink && !isInternalName(file.name) && (!named || named.test(file.name))) regular++;
  return blobs > 0 && blobs === regular ? [folder] : undefined;
}

/** The names a glob whose only wildcard is `*` matches (as ripgrep reads it, for a file's name). */
export function globNames(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
}

/** A blob as its Spillway record says (a blob in a bucket, where its record lies beside it): no record, its stat alone. */
export function recordedBlob(file: { path: string; name: string }, stat: { size: number; mtimeMs: number }, record: ManifestRecord | undefined): Described['blobs'][number] {
  const args = record ? compactArgs(record.args) : undefined;
  return {
    path: file.path,
    name: file.name,
    kind: 'tool-result',
    ...(record?.tool ? { tool: record.tool } : {}),
    ...(record?.toolCallId ? { toolCallId: record.toolCallId } : {}),
    ...(args ? { args } : {}),
    bytes: stat.size,
    createdAt: record?.createdAt || isoTime(stat.mtimeMs),
    mtimeMs: stat.mtimeMs,
    ...(record?.turn !== undefined ? { turn: record.turn } : {}),
    attribution: record ? 'manifest' : 'none',
    ...(record ? { madeBy: 'spillway' as const } : {}),
  };
}

/** A blob attributed by nothing but its own stat. */
export function plainBlob(file: FileFacts & { stat: FileStat }, extra: Partial<Described['blobs'][number]> = {}): Described['blobs'][number] {
  return {
    path: file.path,
    name: file.name,
    kind: 'tool-result',
    bytes: file.stat.size,
    createdAt: isoTime(file.stat.mtimeMs),
    mtimeMs: file.stat.mtimeMs,
    attribution: 'none',
    ...extra,
  };
}

/**
 * The files directly in `dir` whose name `pattern` matches, described by
 * `facts` (from the name alone: these layouts keep no index). A symlink with
 * a matching name is never listed, only counted as skipped.
 */
export async function describeNamedFiles(
  dir: string,
  pattern: RegExp,
  facts: (match: RegExpExecArray) => Partial<Described['blobs'][number]>,
  opts: { ownOnly?: boolean } = {},
): Promise<{ blobs: Described['blobs']; skipped: number; listed: FileFacts[] }> {
  const blobs: Described['blobs'] = [];
  let skipped = 0;
  const listed = await listFiles(dir, opts);
  for (const file of listed) {
    const match = pattern.exec(file.name);
    if (!match) continue;
    if (file.symlink || !file.stat) {
      skipped++;
      continue;
    }
    blobs.push(plainBlob({ ...file, stat: file.stat }, facts(match)));
  }
  return { blobs, skipped, listed };
}

/** Whether a folder listing holds a regular file whose name matches. */
export function holdsNamed(entries: readonly Dirent[], pattern: RegExp): boolean {
  return entries.some((e) => e.isFile() && pattern.test(e.name));
}

/**
 * A source whose files all sit in one folder of TMPDIR (`$TMPDIR/<folder>`),
 * named so that nothing ties them to a session: the folder is one session,
 * and its default root lets clean delete only files `files` matches.
 */
export function tmpFolderSource(spec: {
  name: SourceName;
  folder: string;
  files: RegExp;
  /** A glob (`*` its only wildcard) every name `files` matches also matches: what ripgrep reads in the folder. */
  glob: string;
  sessionId: string;
  title: string;
  facts: (match: RegExpExecArray) => Partial<Described['blobs'][number]>;
}): Source {
  const named = globNames(spec.glob);
  return {
    name: spec.name,
    defaultRoots: (dirs) => [{ path: path.join(dirs.tmp, spec.folder), depth: 0, files: spec.files }],
    claim(dir) {
      if (path.basename(dir.path) !== spec.folder || !holdsNamed(dir.entries, spec.files)) return [];
      return [{ source: spec.name, dir: dir.path, owns: [] }];
    },
    async describe(claim) {
      // A folder another user made (or may write to) holds no output of yours, whatever its files are named.
      const folder = lstatSync(claim.dir, { throwIfNoEntry: false });
      const theirs = folder && notOurs(folder);
      if (theirs) throw new Error(`refusing ${claim.dir}: ${theirs}`);
      const { blobs, skipped, listed } = await describeNamedFiles(claim.dir, spec.files, spec.facts, { ownOnly: true });
      if (blobs.length === 0) return undefined;
      // A folder of TMPDIR may hold anything: ripgrep reads it whole only for the files named like this
      // agent's (the glob), and only while each of those is a blob (a hard link so named keeps it file by file).
      const blobFolders = wholeFolder(claim.dir, listed, blobs.length, named);
      return {
        session: { source: spec.name, id: spec.sessionId, title: spec.title, dir: claim.dir, skipped, notes: [] },
        blobs,
        dependsOn: [],
        ...(blobFolders && { blobFolders, blobNames: spec.glob }),
      };
    },
  };
}
