// Paths as an index's trailer stores them: each once, as the number of the
// folder it lies in and its name there. The trailer names every session's
// folder, its blob folders and the folders walked above them, each path whole
// up to three times otherwise.

import * as path from 'node:path';
import { childPath } from '../shared/child-path';

/** A stored path: whole, or [the number of the folder it lies in, its name there]. */
export type StoredPath = string | [number, string];

/** Numbers paths as they are first given, each folder above them stored once. */
export class PathTable {
  private readonly numbers = new Map<string, number>();
  readonly stored: StoredPath[] = [];

  number(p: string): number {
    let n = this.numbers.get(p);
    if (n !== undefined) return n;
    const folder = path.dirname(p);
    const name = path.basename(p);
    // By its folder only where joining the two gives it back (not a root, nothing path.dirname would normalize).
    const entry: StoredPath = folder !== p && isName(name) && childPath(folder, name) === p ? [this.number(folder), name] : p;
    n = this.stored.push(entry) - 1;
    this.numbers.set(p, n);
    return n;
  }
}

/** The paths a table stored, by number; undefined when one is malformed (its folder not stored before it, or a name that is no single name). */
export function storedPaths(stored: unknown): string[] | undefined {
  if (!Array.isArray(stored)) return undefined;
  const paths: string[] = [];
  for (const entry of stored as unknown[]) {
    if (typeof entry === 'string') paths.push(entry);
    else if (Array.isArray(entry) && entry.length === 2 && isNumberIn(paths, entry[0]) && isName(entry[1])) paths.push(flatChildPath(paths[entry[0]]!, entry[1]));
    else return undefined;
  }
  return paths;
}

/**
 * childPath(), joined by Array.prototype.join into a flat string: `+` makes a rope, flattened where the path is first
 * hashed or compared, in the walk.
 */
function flatChildPath(folder: string, name: string): string {
  return [folder, name].join(folder.endsWith(path.sep) ? '' : path.sep);
}

/** Whether `n` numbers one of `paths`. */
export function isNumberIn(paths: readonly string[], n: unknown): n is number {
  return Number.isInteger(n) && (n as number) >= 0 && (n as number) < paths.length;
}

function isName(name: unknown): name is string {
  return typeof name === 'string' && name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes(path.sep);
}
