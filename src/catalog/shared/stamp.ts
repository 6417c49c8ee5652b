// A file's stamp: what tells a later run whether it changed.
import { lstatSync, type Stats } from 'node:fs';

/**
 * `ino:size:mtime:ctime` of a path (not followed), or '-' when it does not exist. The ctime, which no one can set,
 * catches a folder whose mtime was put back after a change (`touch -r`, a restore) and a chmod that made it readable.
 */
export function stampOf(file: string): string {
  return stampFrom(statOf(file));
}

/** The stamp of an lstat already made (null: missing, undefined: unreadable), as stampOf() would give it. */
export function stampFrom(stat: Stats | null | undefined): string {
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}` : stat === null ? '-' : '?';
}

/** lstat, synchronous (a stat is cheaper than a promise around one); null when missing, undefined when unreadable. */
export function statOf(file: string): Stats | null | undefined {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) ?? null;
  } catch {
    return undefined; // unreadable: never equal to a stored stamp
  }
}
