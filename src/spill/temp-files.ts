// Blobs written under a temp name (exclusive, 0600, never through a symlink), synced, then renamed into place;
// temps a killed writer left behind are reclaimed.

import { constants as C, promises as fsp, type Stats } from 'node:fs';
import * as path from 'node:path';
import { AnchoredDir } from './anchored-dir';
import { isStaleTemp } from './internal-files';
import { testPause } from './test-pause';
import { SpillError } from './types';

/** Blobs are written in pieces this size (a test pause can fall between two). */
const WRITE_CHUNK = 1 << 20;

/**
 * Create the temp `temp` in `tempDir` (exclusive, owner-only, never through a
 * symlink), let `fill` write it, sync it; its stats once closed. A failed
 * write removes the temp (unless `keepOnError`: the caller reads it back first).
 */
export async function writeTemp(tempDir: AnchoredDir, temp: string, fill: (handle: fsp.FileHandle) => Promise<void>, opts: { keepOnError?: boolean } = {}): Promise<Stats> {
  const handle = await fsp.open(tempDir.at(temp), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  try {
    await fill(handle);
    await handle.sync();
    return await handle.stat();
  } catch (err) {
    if (!opts.keepOnError) await fsp.unlink(tempDir.at(temp)).catch(() => undefined);
    throw err;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

export async function writeChunked(handle: fsp.FileHandle, data: Buffer): Promise<void> {
  for (let at = 0; at < data.length || at === 0; at += WRITE_CHUNK) {
    const end = Math.min(data.length, at + WRITE_CHUNK);
    let done = at;
    while (done < end) done += (await handle.write(data, done, end - done)).bytesWritten;
    if (at === 0) await testPause('blob-write');
    if (data.length === 0) break;
  }
}

/**
 * Rename the written temp to `name` in `dir`, so `name` is complete or absent
 * whatever happens to this process. If this fails the temp is still the
 * temp (moved back when the folder moved meanwhile): the caller decides.
 */
export async function placeTemp(tempDir: AnchoredDir, temp: string, written: Stats, dir: AnchoredDir, name: string): Promise<void> {
  const final = dir.at(name);
  if (await fsp.lstat(final).then(() => true, () => false)) throw new SpillError('EEXIST', `blob name taken: ${path.join(dir.path, name)}`);
  await testPause('before-rename');
  await fsp.rename(tempDir.at(temp), final);
  // The digest will name the blob by path: that path must lead to it (the
  // folder may have been moved away since it was opened).
  const named = await fsp.lstat(path.join(dir.path, name)).catch(() => undefined);
  if (named?.ino !== written.ino || named.dev !== written.dev) {
    await fsp.rename(final, tempDir.at(temp)).catch(() => fsp.unlink(final).catch(() => undefined));
    throw new SpillError('ELOOP', `spill folder moved during the write: ${dir.path}`);
  }
}

/** Remove the temp `temp` if it is still there, and close the root holding it. */
export async function dropTemp(root: AnchoredDir, temp: string): Promise<void> {
  await fsp.unlink(root.at(temp)).catch(() => undefined);
  await root.close();
}

/** Remove blob temps that killed spills left in `dir` (the root). */
export async function reclaimStaleTemps(dir: AnchoredDir): Promise<void> {
  for (const name of await fsp.readdir(dir.self).catch(() => [] as string[])) {
    if (!name.startsWith('.spillway-tmp-')) continue;
    const st = await fsp.lstat(dir.at(name)).catch(() => undefined);
    if (st?.isFile() && isStaleTemp(name, st.mtimeMs)) await fsp.unlink(dir.at(name)).catch(() => undefined);
  }
}

