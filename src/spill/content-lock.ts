// A lock file per content hash, so two processes spilling the same body store it once.

import { constants as C, promises as fsp } from 'node:fs';
import { PID_OWNER, STALE_AFTER_MS, writerState } from './internal-files';

/** How long a spill waits for another process spilling the same body. */
const LOCK_WAIT_MS = 10_000;

/** Create `lock` exclusively (true), breaking a stale one; false after LOCK_WAIT_MS. */
export async function acquireLock(lock: string): Promise<boolean> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await fsp.open(lock, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
      await handle.writeFile(PID_OWNER).finally(() => handle.close());
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false;
    }
    if (await lockIsStale(lock)) {
      await fsp.unlink(lock).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
  }
}

/**
 * How old a lock must be to be broken when its holder cannot be asked: one of another host or PID namespace
 * (a container sharing the folder), or not yet written. A lock is held while one blob is written.
 */
const UNKNOWN_HOLDER_MS = 60_000;

/** A lock whose holder is gone: its pid is dead here, it is older than a day, or its holder cannot be asked and it is older than UNKNOWN_HOLDER_MS. */
async function lockIsStale(lock: string): Promise<boolean> {
  const st = await fsp.lstat(lock).catch(() => undefined);
  if (!st) return false; // released meanwhile: just try again
  const age = Date.now() - st.mtimeMs;
  if (!st.isFile() || age > STALE_AFTER_MS) return true;
  const holder = await fsp.readFile(lock, { encoding: 'utf8', flag: C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK }).catch(() => '');
  const state = writerState(holder);
  return state === 'gone' || (state === 'unknown' && age > UNKNOWN_HOLDER_MS);
}

