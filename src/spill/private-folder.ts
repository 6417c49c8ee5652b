// Whether a folder is private to this user: Spillway keeps its blobs, manifests
// and index only in folders no one else owns or may write to (another user could
// otherwise swap a file there for one they made, or remove it).
import type { Stats } from 'node:fs';

/** Whether the file or folder `st` describes is another user's (never where there are no uids: Windows). */
export function ownedByAnother(st: Pick<Stats, 'uid'>): boolean {
  return typeof process.getuid === 'function' && st.uid !== process.getuid();
}

/** Why the folder `st` describes is not this user's alone, or undefined. (Windows has no uid or mode bits to judge.) */
export function notPrivate(st: Pick<Stats, 'uid' | 'mode'>): 'is owned by another user' | 'is writable by others' | undefined {
  if (process.platform === 'win32') return undefined;
  if (ownedByAnother(st)) return 'is owned by another user';
  if ((st.mode & 0o022) !== 0) return 'is writable by others';
  return undefined;
}
