// A folder's entry by name, joined as it is: the folders come normalized (from
// path.resolve/join) and names from readdir, so path.join's normalizing would
// only cost time (per file, on every scan) and memory.
import * as path from 'node:path';

/** `folder`'s entry `name` (a single name, as readdir gives). */
export function childPath(folder: string, name: string): string {
  return folder.endsWith(path.sep) ? folder + name : `${folder}${path.sep}${name}`;
}

/**
 * The folder of which `file` is the entry `name` (childPath(folder, name) === file), or undefined when it is
 * not one (`name` is not its last part, or the folder is the file system's root): path.dirname without its
 * cost, for each of 100,000 blobs whose name is at hand.
 */
export function folderHolding(file: string, name: string): string | undefined {
  const cut = file.length - name.length - 1;
  if (cut < 1 || name === '' || file[cut] !== path.sep || !file.endsWith(name) || name.includes(path.sep)) return undefined;
  return file.slice(0, cut);
}
