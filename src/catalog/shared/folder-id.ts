// Which folder a root is now, to tell a root removed or made again from one that stayed.
import { statSync } from 'node:fs';

/** Which folder is at `p` now (device, inode and birth time: an inode number can be reused at once), undefined when none. */
export function folderId(p: string): string | undefined {
  let stat;
  try {
    stat = statSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined; // unreadable: no identity, as missing
  }
  return stat?.isDirectory() ? `${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : undefined;
}

/** Why a root the user named is not scanned (a default root that is missing is simply an agent not installed). */
export function notAFolder(p: string): string {
  try {
    return `root ${p}: ${statSync(p, { throwIfNoEntry: false }) ? 'not a folder' : 'no such folder'}`;
  } catch (err) {
    return `cannot read root ${p} (${(err as NodeJS.ErrnoException).code})`;
  }
}
