// After a clean: the folders an agent or Spillway made only for blobs
// (Claude Code's `tool-results/`, pi's and Spillway's `<id>-blobs/`) are
// removed once nothing is left in them but an empty manifest. Never a root,
// never outside one, never through a symlink; rmdir refuses a folder that
// filled up meanwhile.
import { closeSync, lstatSync, readdirSync, readSync, realpathSync, rmdirSync, unlinkSync } from 'node:fs';
import * as path from 'node:path';
import { isBelow } from '../../spill/inside';
import { MANIFEST_NAME } from '../../spill/manifest';
import { openRegularFileSync } from '../../spill/regular-file';
import { pauser } from '../shared/pause';

const BLOB_ONLY_FOLDER = /^(tool-results|.+-blobs)$/;

export function isBlobOnlyFolder(dir: string): boolean {
  return BLOB_ONLY_FOLDER.test(path.basename(dir));
}

/** Removes the emptied blob-only folders that held `deleted` files; returns the folders removed. */
export async function removeEmptiedBlobFolders(deleted: readonly string[], roots: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  const realRoots = new Map<string, string | undefined>();
  const pause = pauser();
  // Synchronous steps (a clean can empty thousands of folders; a promise per step cost more than the step), with pauses.
  for (const dir of new Set(deleted.map((p) => path.dirname(path.resolve(p))))) {
    await pause();
    if (!isBlobOnlyFolder(dir) || !safeBelowRoot(dir, roots, realRoots)) continue;
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      continue;
    }
    if (entries.some((e) => e !== MANIFEST_NAME)) continue;
    try {
      if (entries.length) {
        const manifest = path.join(dir, MANIFEST_NAME);
        // Only a manifest with no records left (a clean rewrote it so): anything else may be a writer's.
        if (!isBlankFile(manifest)) continue;
        unlinkSync(manifest);
      }
      rmdirSync(dir);
      removed.push(dir);
    } catch {
      // filled up, vanished or not ours to remove: leave it
    }
  }
  return removed;
}

/** Strictly inside a root, and every folder from the root down is a real folder (no symlink on the way). */
function safeBelowRoot(dir: string, roots: readonly string[], realRoots: Map<string, string | undefined>): boolean {
  for (const r of roots) {
    const root = path.resolve(r);
    if (!isBelow(root, dir)) continue;
    const rel = path.relative(root, dir);
    if (!realRoots.has(root)) realRoots.set(root, realpathQuiet(root));
    const realRoot = realRoots.get(root);
    try {
      return realRoot !== undefined && lstatSync(dir).isDirectory() && realpathSync(dir) === path.join(realRoot, rel);
    } catch {
      return false;
    }
  }
  return false;
}

/** A regular file (opened never through a symlink, never blocking on a FIFO) holding at most whitespace; a large one is not read. */
function isBlankFile(file: string): boolean {
  const { fd, size } = openRegularFileSync(file);
  try {
    if (size > 4096) return false;
    const bytes = Buffer.alloc(size);
    return readSync(fd, bytes, 0, size, 0) === size && bytes.toString('utf8').trim() === '';
  } finally {
    closeSync(fd);
  }
}

function realpathQuiet(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}
