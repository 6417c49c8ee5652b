// The catalog's blobs as grep targets: whole folders where a layout has them, the rest by name.

import { RootedReads } from '../read/rooted-read';
import { BlobSizes } from '../scan/settled';
import { childPath } from '../shared/child-path';
import { type BlobFolder, type BlobFolderNames, type GrepTargets } from './grep';

/**
 * The blob folders an index's trailer names, for ripgrep to start on before a scan: those read whole. (A
 * folder read only for its blobs' names, in TMPDIR, waits for the scan, which gives its glob.)
 */
export function wholeFolders(blobFolders: BlobFolderNames): string[] {
  const whole: string[] = [];
  for (const [folder, names] of blobFolders) if (names === undefined) whole.push(folder);
  return whole;
}

/**
 * Blobs as grep targets: those in blob folders through their folder, the rest by name. Only blobs'
 * matches are accepted (a blob folder may have gained another file).
 */
export function grepTargetsOf(blobs: BlobSizes, blobFolders: BlobFolderNames, reads: RootedReads): GrepTargets {
  const folders = new Map<string, BlobFolder>();
  for (const [folder, names] of blobFolders) folders.set(folder, { path: folder, ...(names !== undefined ? { names } : {}), files: 0, bytes: 0 });
  const loose: string[] = [];
  const inFolders: Array<[string, ReadonlyMap<string, number>]> = [];
  for (const [dir, names] of blobs.byFolder()) {
    const folder = folders.get(dir);
    if (!folder) {
      for (const name of names.keys()) loose.push(childPath(dir, name));
      continue;
    }
    inFolders.push([dir, names]);
    folder.files += names.size;
    for (const bytes of names.values()) folder.bytes += bytes;
  }
  const sizeOf = (file: string): number | undefined => blobs.get(file);
  return {
    paths: loose,
    folders: [...folders.values()],
    folderFiles: () => inFolders.flatMap(([dir, names]) => [...names.keys()].map((name) => childPath(dir, name))),
    accept: (file) => sizeOf(file) !== undefined,
    sizeOf,
    reads,
  };
}

