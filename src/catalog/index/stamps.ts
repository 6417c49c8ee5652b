// Stamps (inode, size, mtime, ctime) of what a description read, and whether they still hold.

import type { CheckedClaim } from './claims';
import { stampOf, statOf } from '../shared/stamp';

/**
 * A stamp this close to the scan's start cannot be trusted: a file changed
 * again within the file system's timestamp granularity keeps its mtime.
 */
const RACY_MS = 2000;
/** A stamp no file has: stored for a folder or file that could not be read, so its session is described again. */
export const UNSETTLED = '!';

/**
 * Whether a blob still has the size and mtime it was described with. (Its
 * inode is not compared: blobs are replaced by writing a new file, which
 * gets a new mtime; comparing it would cost a second stat per blob while describing.)
 */
export function blobUnchanged(blob: { path: string; bytes: number; mtimeMs: number }, describedAt: number): boolean {
  if (blob.mtimeMs >= describedAt - RACY_MS) return false;
  const stat = statOf(blob.path);
  return !!stat && stat.isFile() && stat.size === blob.bytes && stat.mtimeMs === blob.mtimeMs;
}

/** Whether every blob of an entry still has the size and mtime it was described with (see blobUnchanged). */
export function blobsUnchanged(entry: CheckedClaim): boolean {
  return (entry.described?.blobs ?? []).every((blob) => blobUnchanged(blob, entry.describedAt));
}

/** Whether every stamp of an entry holds (see stampHolds); `now` gives a stamp this scan already took, if it did. */
export function stampsHold(entry: CheckedClaim, now?: (file: string) => string | undefined): boolean {
  return entry.stamps.every(([file, stamp]) => stampHolds(file, stamp, entry.describedAt, now?.(file)));
}
/** Whether a stamp's mtime is too close to when it was taken to prove that nothing changed since. */
function isRacy(stamp: string, takenAt: number): boolean {
  // Its third field (ino:size:mtime:ctime), read in place: asked of every stamp a scan checks, a split made four strings.
  const second = stamp.indexOf(':', stamp.indexOf(':') + 1);
  const mtime = second === -1 ? NaN : Number.parseFloat(stamp.slice(second + 1));
  return Number.isFinite(mtime) && mtime >= takenAt - RACY_MS;
}

/**
 * Whether `file` provably has not changed since `stamp` was taken at `takenAt`: not racy, and stamped the
 * same now (`now`: its stamp as this scan already took it, so it is not stat'ed twice).
 */
export function stampHolds(file: string, stamp: string, takenAt: number, now?: string): boolean {
  return !isRacy(stamp, takenAt) && (now ?? stampOf(file)) === stamp;
}