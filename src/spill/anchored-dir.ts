// A folder resolved once. Node has no openat/unlinkat, so on Linux a folder is
// opened (O_DIRECTORY|O_NOFOLLOW) and every later file operation names
// `/proc/self/fd/<fd>/<name>`: the kernel resolves that through the open
// descriptor, so swapping the folder's path for a symlink after it was opened
// cannot redirect a write or a deletion. Elsewhere (macOS, Windows) the folder
// is checked by lstat and used by path: the check and the use are two lookups
// (docs/catalog.md, "Threat model", says so).
import { closeSync, constants as C, existsSync, lstatSync, openSync, promises as fsp, readlinkSync, realpathSync, type Stats } from 'node:fs';
import * as path from 'node:path';
import { SpillError } from './types';

const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

/** Whether folders are held by descriptor (Linux) rather than re-resolved by path. */
export const FOLDERS_HELD_OPEN = PROC_FD;

export class AnchoredDir {
  private constructor(
    /** The folder's real path (for messages and the paths handed out). */
    readonly path: string,
    private readonly handle: fsp.FileHandle | undefined,
    readonly stats: Stats,
  ) {}

  /** The open folder's descriptor (Linux), e.g. to hand it to another process; undefined where folders are used by path. */
  get fd(): number | undefined {
    return this.handle?.fd;
  }

  /** A path for the folder itself (listing it). */
  get self(): string {
    return this.handle ? `/proc/self/fd/${this.handle.fd}` : this.path;
  }

  /** A path naming `name`, one entry of this folder, resolved through the opened folder. */
  at(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes(path.sep) || name.includes('\0')) {
      throw new SpillError('EINVAL', `not a file name: ${JSON.stringify(name)}`);
    }
    return `${this.self}/${name}`;
  }

  /** A path relative to this folder (may climb with `..`), for lookups only. */
  relative(rel: string): string {
    return path.isAbsolute(rel) ? rel : `${this.self}/${rel}`;
  }

  /** Open the folder `dir` names (the path is resolved once, a symlinked root included: roots are trusted). */
  static async open(dir: string): Promise<AnchoredDir> {
    const real = await fsp.realpath(dir);
    return AnchoredDir.openReal(real, real);
  }

  /** The sub-folder `name`, never through a symlink; created 0700 first with `create`. */
  async child(name: string, options: { create?: boolean } = {}): Promise<AnchoredDir> {
    const target = this.at(name);
    if (options.create) {
      try {
        await fsp.mkdir(target, { mode: 0o700 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    return AnchoredDir.openReal(target, path.join(this.path, name));
  }

  /** Descend `segments` (folder names) one at a time. Closes nothing on failure but what it opened. */
  async descend(segments: readonly string[], options: { create?: boolean } = {}): Promise<AnchoredDir> {
    let cur: AnchoredDir = this;
    try {
      for (const seg of segments) {
        const next: AnchoredDir = await cur.child(seg, options);
        if (cur !== this) await cur.close();
        cur = next;
      }
    } catch (err) {
      if (cur !== this) await cur.close();
      throw err;
    }
    return cur;
  }

  async close(): Promise<void> {
    await this.handle?.close().catch(() => undefined);
  }

  private static async openReal(target: string, logical: string): Promise<AnchoredDir> {
    if (!PROC_FD) return new AnchoredDir(logical, undefined, folderStats(await fsp.lstat(target), logical));
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(target, C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
    } catch (err) {
      throw folderOpenError(err, target, logical);
    }
    try {
      return new AnchoredDir(logical, handle, await handle.stat());
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
}

/** A folder held open (Linux: by descriptor) for another process to read through /proc/self/fd. */
export interface HeldFolder {
  /** Undefined where folders are used by path (not Linux). */
  fd: number | undefined;
  close(): void;
}

/**
 * The folder at `target` held open, synchronously (grep holds thousands at
 * once, and a promise per folder cost more than its open). With
 * `checkLocation`, refused unless the kernel found it at `target` itself: a
 * folder on the way swapped for a symlink leads elsewhere, which the
 * descriptor's own location shows.
 */
export function holdFolder(target: string, checkLocation = false): HeldFolder {
  if (!PROC_FD) {
    folderStats(lstatSync(target), target);
    // Without a descriptor to ask, the path itself is checked (a lookup before the use: see the threat model).
    if (checkLocation && realpathSync(target) !== target) throw new SpillError('ELOOP', `refusing a folder reached through a symlink: ${target}`);
    return { fd: undefined, close: () => undefined };
  }
  let fd: number;
  try {
    fd = openSync(target, C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
  } catch (err) {
    throw folderOpenError(err, target, target);
  }
  if (checkLocation && readlinkQuiet(`/proc/self/fd/${fd}`) !== target) {
    closeSync(fd);
    throw new SpillError('ELOOP', `refusing a folder reached through a symlink: ${target}`);
  }
  return { fd, close: () => closeSync(fd) };
}

function readlinkQuiet(link: string): string | undefined {
  try {
    return readlinkSync(link);
  } catch {
    return undefined;
  }
}

/** `stats` when they are a folder's (where folders are used by path): a symlink or anything else in its place is refused. */
function folderStats(stats: Stats, logical: string): Stats {
  if (stats.isSymbolicLink()) throw new SpillError('ELOOP', `refusing a symlink in place of a folder: ${logical}`);
  if (!stats.isDirectory()) throw new SpillError('ENOTDIR', `not a folder: ${logical}`);
  return stats;
}

/** Why opening a folder failed, said plainly: a symlink in its place, not a folder, or the system's error. */
function folderOpenError(err: unknown, target: string, logical: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return new SpillError('ELOOP', `refusing a symlink in place of a folder: ${logical}`);
  // O_DIRECTORY wins over O_NOFOLLOW: a symlink to a folder says ENOTDIR too.
  if (code === 'ENOTDIR') {
    let symlink = false;
    try {
      symlink = lstatSync(target).isSymbolicLink();
    } catch {
      // gone meanwhile: not a folder either
    }
    return symlink ? new SpillError('ELOOP', `refusing a symlink in place of a folder: ${logical}`) : new SpillError('ENOTDIR', `not a folder: ${logical}`);
  }
  return err;
}

/** Run `fn` with `dir` open, closing it afterwards. */
export async function withDir<T>(dir: Promise<AnchoredDir>, fn: (dir: AnchoredDir) => Promise<T>): Promise<T> {
  const opened = await dir;
  try {
    return await fn(opened);
  } finally {
    await opened.close();
  }
}

/** The folder `segments` below the root `root`, each step refused when it is a symlink or not a folder. */
export async function openBelow(root: string, segments: readonly string[], options: { create?: boolean } = {}): Promise<AnchoredDir> {
  const top = await AnchoredDir.open(root);
  if (segments.length === 0) return top;
  try {
    return await top.descend(segments, options);
  } finally {
    await top.close();
  }
}
