// Blob and manifest reads open the file itself, never what replaced it after the scan: a
// symlink is refused by O_NOFOLLOW and a FIFO opens at once under O_NONBLOCK
// (a plain open would wait for a writer) and is then refused by fstat. On a
// regular file O_NONBLOCK changes nothing, so reads behave as usual. A file
// with more than one hard link is refused too: its other name may lie anywhere.
import { closeSync, constants as C, fstatSync, openSync, promises as fsp, type Stats } from 'node:fs';

/** Thrown for a path that is not a regular file; `code` is 'ENOTREG'. */
export class NotRegularFileError extends Error {
  readonly code = 'ENOTREG';
  constructor(readonly path: string, kind: string) {
    super(kind.endsWith('links') ? `refusing a file with ${kind}: ${path}` : `not a regular file (${kind}): ${path}`);
    this.name = 'NotRegularFileError';
  }
}

/**
 * Why a file Spillway would print, write or delete is refused: not a regular
 * file, or a regular file with other hard links (another name for it may lie
 * outside the roots, e.g. a hard link to a private file).
 */
export function refusedKind(stats: Stats): string | undefined {
  if (!stats.isFile()) return fileKind(stats);
  if (stats.nlink > 1) return `${stats.nlink} hard links`;
  return undefined;
}

/** What kind of non-regular file `stats` describes, for messages. */
export function fileKind(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFIFO()) return 'FIFO';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device';
  return 'special file';
}

/** How to open a file that must be regular: read-only unless `flags` says more; `shown` names it in errors. */
export interface RegularOpen {
  flags?: number;
  mode?: number;
  shown?: string;
}

/**
 * Open `path` if it is a regular file with one link (not through a symlink); else NotRegularFileError.
 * O_NOFOLLOW and O_NONBLOCK are always added to `flags`.
 */
export async function openRegularFile(path: string, how: RegularOpen = {}): Promise<fsp.FileHandle> {
  const shown = how.shown ?? path;
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(path, (how.flags ?? C.O_RDONLY) | C.O_NOFOLLOW | C.O_NONBLOCK, how.mode);
  } catch (err) {
    throw openError(err, shown);
  }
  try {
    const refused = refusedKind(await handle.stat());
    if (refused) throw new NotRegularFileError(shown, refused);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}

/** What a refused O_NOFOLLOW | O_NONBLOCK open says about the file, as NotRegularFileError; other errors as they are. */
function openError(err: unknown, shown: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  // O_NOFOLLOW on a symlink fails with ELOOP (Linux) or EMLINK (some BSDs).
  if (code === 'ELOOP' || code === 'EMLINK') return new NotRegularFileError(shown, 'symlink');
  // A FIFO opened for writing under O_NONBLOCK with no reader.
  if (code === 'ENXIO') return new NotRegularFileError(shown, 'FIFO');
  return err;
}

/** A file opened for reading, with its size when opened. */
export interface OpenedFile {
  fd: number;
  size: number;
}

/** openRegularFile, synchronous (for files read at once: cheaper than the promises). */
export function openRegularFileSync(path: string): OpenedFile {
  let fd: number;
  try {
    fd = openSync(path, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch (err) {
    throw openError(err, path);
  }
  try {
    const stats = fstatSync(fd);
    const refused = refusedKind(stats);
    if (refused) throw new NotRegularFileError(path, refused);
    return { fd, size: stats.size };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * A settings file's text: followed if a symlink (dotfile managers link them) but never blocked on a FIFO put
 * in its place, and refused unless it is a regular file (NotRegularFileError). ENOENT and the like as thrown.
 */
export async function readSettingsText(path: string): Promise<string> {
  const handle = await fsp.open(path, C.O_RDONLY | C.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new NotRegularFileError(path, fileKind(stats));
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
