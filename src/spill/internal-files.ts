// Spillway's own bookkeeping files: the manifest, a blob being written
// (`.spillway-tmp-<pid>-<random>` in the store root, renamed into its session
// folder once complete; one a killed spill left is removed by the next spill
// into the root), a dedup lock (`.spillway-lock-<sha256 prefix>` in the
// session folder), and a manifest being rewritten by clean
// (`.spillway.jsonl.<random>.tmp`). None is ever listed as a blob.
import { randomBytes } from 'node:crypto';
import { MANIFEST_NAME } from './manifest';

const TEMP_PREFIX = '.spillway-tmp-';
export const LOCK_PREFIX = '.spillway-lock-';
/** A temp or lock older than this is stale even if its pid is alive again (pids are reused). */
export const STALE_AFTER_MS = 24 * 3_600_000;

/** A fresh temp name carrying this process's pid. */
export function tempName(): string {
  return `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`;
}

/** The manifest and every hidden `.spillway*` file: never listed as blobs. */
export function isInternalName(name: string): boolean {
  return name === MANIFEST_NAME || name.startsWith('.spillway');
}

/** Whether process `pid` (of this user) still runs. */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A blob temp whose writer is gone (or that is older than a day): left by a killed spill. */
export function isStaleTemp(name: string, mtimeMs: number, now = Date.now()): boolean {
  if (!name.startsWith(TEMP_PREFIX)) return false;
  const pid = Number(/^\.spillway-tmp-(\d+)-/.exec(name)?.[1]);
  return now - mtimeMs > STALE_AFTER_MS || !processAlive(pid);
}

