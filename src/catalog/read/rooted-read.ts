// Reads of files below the known roots, checked against where the kernel
// actually found them. A blob is opened by path (O_NOFOLLOW refuses a symlink
// at the file itself), but the folders above it are resolved by that same
// lookup: one swapped for a symlink at that instant would lead the open to a
// same-named file elsewhere. On Linux the opened descriptor names its own
// location (/proc/self/fd/<fd>); it must be the root's real path joined with
// the blob's path below the root, else the file is refused before a byte is
// read. Folders handed to ripgrep are checked the same way and handed over
// as descriptors, so rg searches the folder that was checked. Roots are trusted
// and resolved once; nothing below them may be a symlink (the walk never
// follows one). Elsewhere the plain open is used (docs/catalog.md, "Threat
// model").
import { closeSync, type promises as fsp, readlinkSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { FOLDERS_HELD_OPEN, holdFolder, type HeldFolder } from '../../spill/anchored-dir';
import { openRegularFile, openRegularFileSync, type OpenedFile } from '../../spill/regular-file';
import { holds, resolved } from '../../spill/inside';

/** Opens a file for reading (a regular file with one link, else an error). */
export type OpenForRead = (file: string) => Promise<fsp.FileHandle>;

/** The same, synchronous (for searches that read many files whole). */
export type OpenForReadSync = (file: string) => OpenedFile;

/** How reads reach files and folders (a Catalog's: below its roots; by default: as named). */
export interface ReadAnchor {
  open: OpenForRead;
  openSync: OpenForReadSync;
  /** The folder `dir` held open for ripgrep to read through /proc/self/fd; throws when refused. */
  holdFolder: (dir: string) => HeldFolder;
}

/** Files and folders as named: a symlink at the file (or the folder) itself is refused, the folders above are trusted. */
export const AS_NAMED: ReadAnchor = { open: openRegularFile, openSync: openRegularFileSync, holdFolder: (dir) => holdFolder(realpathSync(dir)) };

/** Thrown for a file whose opened location is not its place below its root; `code` is 'ELOOP'. */
export class MovedFileError extends Error {
  readonly code = 'ELOOP';
  constructor(readonly path: string) {
    super(`refusing a file reached through a symlinked or moved folder: ${path}`);
    this.name = 'MovedFileError';
  }
}

export class RootedReads implements ReadAnchor {
  /** The roots, resolved, longest first. */
  readonly roots: string[];
  private readonly realRoots = new Map<string, string>();

  constructor(roots: readonly string[]) {
    // Longest first: a file is judged by the innermost root holding it.
    this.roots = [...new Set(roots.map((r) => path.resolve(r)))].sort((a, b) => b.length - a.length);
  }

  /** openRegularFile, refused when the file opened is not at `file`'s place below its root. */
  readonly open: OpenForRead = async (file) => {
    const handle = await openRegularFile(file);
    try {
      this.refuseMoved(file, handle.fd);
    } catch (err) {
      await handle.close();
      throw err;
    }
    return handle;
  };

  /** open, synchronous. */
  readonly openSync: OpenForReadSync = (file) => {
    const opened = openRegularFileSync(file);
    try {
      this.refuseMoved(file, opened.fd);
    } catch (err) {
      closeSync(opened.fd);
      throw err;
    }
    return opened;
  };

  /** Throws MovedFileError when descriptor `fd`, opened as `file`, is not at its place below its root. */
  private refuseMoved(file: string, fd: number): void {
    if (!FOLDERS_HELD_OPEN) return;
    const expected = this.expectedLocation(file);
    if (expected !== undefined && readlinkSync(`/proc/self/fd/${fd}`) !== expected) throw new MovedFileError(file);
  }

  /** The folder `dir`, refused when it was not found at its place below its root (as named outside every root). */
  readonly holdFolder = (dir: string): HeldFolder => {
    const expected = this.expectedLocation(dir);
    return expected === undefined ? AS_NAMED.holdFolder(dir) : holdFolder(expected, true);
  };

  /** Where `file` really lies if no folder below its root is a symlink; undefined outside every root. */
  private expectedLocation(file: string): string | undefined {
    const target = resolved(file);
    const root = this.rootOf(target);
    if (root === undefined) return undefined;
    const real = this.realRoot(root);
    // Both normalized and the root a prefix of the path (holds): the rest goes under the real root as it is. No
    // string is made for the common root that is its real path (grep holds thousands of folders before rg starts).
    // Only a root of / (or one leading there) ends with a separator: joined, not doubled.
    if (root.endsWith(path.sep) || real.endsWith(path.sep)) return path.join(real, path.relative(root, target));
    return real === root ? target : real + target.slice(root.length);
  }

  private rootOf(target: string): string | undefined {
    return this.roots.find((r) => holds(r, target));
  }

  /** Resolved once per root (synchronously: it is cached, and folders are held synchronously). */
  private realRoot(root: string): string {
    let real = this.realRoots.get(root);
    if (real === undefined) {
      real = realpathSync(root);
      this.realRoots.set(root, real);
    }
    return real;
  }
}
