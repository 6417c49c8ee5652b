// The one way `hook install|uninstall` writes a user's config file: a temp file beside it, synced, renamed over
// it, so a crash leaves the old file or the new one and never half of either.
import { randomBytes } from 'node:crypto';
import { constants as C, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { fileKind, NotRegularFileError } from '../spill/regular-file';

/**
 * Replaces `file` with `text`, byte for byte. The temp file is created exclusively, 0600, never through a
 * symlink, in the target's folder (a rename does not cross file systems), and takes the original's mode before
 * the rename; a new file is 0600 in a folder made 0700. A config kept as a symlink (dotfile managers) stays one:
 * its target is replaced. A symlink that leads nowhere, or a target that is not a regular file, is refused.
 */
export async function replaceFile(file: string, text: string | Uint8Array): Promise<void> {
  const { target, mode } = await targetOf(file);
  const temp = `${target}.spillway-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  const handle = await fsp.open(temp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  try {
    try {
      await handle.writeFile(text);
      // After the write, and explicitly: the umask must not narrow the mode the user gave the file.
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, target);
  } catch (err) {
    await fsp.rm(temp, { force: true });
    throw err;
  }
  await syncFolder(path.dirname(target));
}

/** Where the new text goes and the mode it keeps. */
async function targetOf(file: string): Promise<{ target: string; mode: number }> {
  const link = await fsp.lstat(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!link) {
    await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    return { target: file, mode: 0o600 };
  }
  let target = file;
  if (link.isSymbolicLink()) {
    target = await fsp.realpath(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ELOOP') throw new NotRegularFileError(file, 'symlink that leads nowhere');
      throw err;
    });
  }
  const stats = target === file ? link : await fsp.stat(target);
  if (!stats.isFile()) throw new NotRegularFileError(file, fileKind(stats));
  return { target, mode: stats.mode & 0o777 };
}

/** The rename itself made durable; a file system that cannot sync a folder is left as it is. */
async function syncFolder(dir: string): Promise<void> {
  const handle = await fsp.open(dir, C.O_RDONLY | C.O_DIRECTORY).catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // EINVAL on some file systems: the rename stands all the same.
  } finally {
    await handle.close();
  }
}
