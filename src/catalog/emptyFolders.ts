// After a clean: the folders an agent or Spillway made only for blobs
// (Claude Code's `tool-results/`, pi's and Spillway's `<id>-blobs/`) are
// removed once nothing is left in them but an empty manifest. Never a root,
// never outside one, never through a symlink; rmdir refuses a folder that
// filled up meanwhile.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { MANIFEST_NAME } from '../spill/manifest';

const BLOB_ONLY_FOLDER = /^(tool-results|.+-blobs)$/;

export function isBlobOnlyFolder(dir: string): boolean {
  return BLOB_ONLY_FOLDER.test(path.basename(dir));
}

/** Removes the emptied blob-only folders that held `deleted` files; returns the folders removed. */
export async function removeEmptiedBlobFolders(deleted: readonly string[], roots: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const dir of new Set(deleted.map((p) => path.dirname(path.resolve(p))))) {
    if (!isBlobOnlyFolder(dir) || !(await safeBelowRoot(dir, roots))) continue;
    const entries = await fsp.readdir(dir).catch(() => undefined);
    if (!entries || entries.some((e) => e !== MANIFEST_NAME)) continue;
    try {
      if (entries.length) {
        const manifest = path.join(dir, MANIFEST_NAME);
        const stat = await fsp.lstat(manifest);
        // Only a manifest with no records left (a clean rewrote it so): anything else may be a writer's.
        if (!stat.isFile() || (await fsp.readFile(manifest, 'utf8')).trim() !== '') continue;
        await fsp.unlink(manifest);
      }
      await fsp.rmdir(dir);
      removed.push(dir);
    } catch {
      // filled up, vanished or not ours to remove: leave it
    }
  }
  return removed;
}

/** Strictly inside a root, and every folder from the root down is a real folder (no symlink on the way). */
async function safeBelowRoot(dir: string, roots: readonly string[]): Promise<boolean> {
  for (const r of roots) {
    const root = path.resolve(r);
    const rel = path.relative(root, dir);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
    try {
      const stat = await fsp.lstat(dir);
      if (!stat.isDirectory()) return false;
      return (await fsp.realpath(dir)) === path.join(await fsp.realpath(root), rel);
    } catch {
      return false;
    }
  }
  return false;
}
