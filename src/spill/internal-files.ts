// Spillway's own bookkeeping files: the manifest, a blob being written
// (`.spillway-tmp-<pid>-at<place>-<random>` in the store root, renamed into its
// session folder once complete; one a killed spill left is removed by the next
// spill into the root), a dedup lock (`.spillway-lock-<sha256 prefix>` in the
// session folder, holding `<pid>@<place>`), and a manifest being rewritten by
// clean (`.spillway.jsonl.<random>.tmp`). None is ever listed as a blob.
import { createHash, randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { processState } from '../common/process-state';

const TEMP_PREFIX = '.spillway-tmp-';
export const LOCK_PREFIX = '.spillway-lock-';
/** A temp or lock older than this is stale even if its pid is alive again (pids are reused). */
export const STALE_AFTER_MS = 24 * 3_600_000;

/**
 * Where this process's pid means something: its host and PID namespace, hashed (8 hex digits). A store
 * may be shared with a container (a bind-mounted home) or another machine (NFS), where the same number
 * is another process or none: there a writer's pid cannot say whether it is gone.
 */
export const PID_PLACE = createHash('sha256').update(`${hostname()}\0${pidNamespace()}`).digest('hex').slice(0, 8);

function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid'); // Linux: 'pid:[4026531836]'
  } catch {
    return '';
  }
}

/** This process, as a lock's content gives it: `<pid>@<place>`. */
export const PID_OWNER = `${process.pid}@${PID_PLACE}`;

/**
 * A fresh temp name carrying this process's pid and place. The pid comes first, then `-`, as in the names
 * written before places were: a Spillway of then, sharing the folder, still reads the pid (and does not take
 * the temp for one whose writer is gone).
 */
export function tempName(): string {
  return `${TEMP_PREFIX}${process.pid}-at${PID_PLACE}-${randomBytes(6).toString('hex')}`;
}

/**
 * What is known of the writer `owner` (`<pid>@<place>`, or a bare pid as written before places were):
 * `gone` when its pid is dead here; `unknown` when it is of another place (or unreadable): then only age tells.
 */
export function writerState(owner: string): 'running' | 'gone' | 'unknown' {
  const m = /^(\d+)(?:@([0-9a-f]{8}))?$/.exec(owner);
  if (!m || (m[2] !== undefined && m[2] !== PID_PLACE)) return 'unknown';
  return processState(Number(m[1])) === 'running' ? 'running' : 'gone';
}

/** A blob temp whose writer is gone (or that is older than a day): left by a killed spill. */
export function isStaleTemp(name: string, mtimeMs: number, now = Date.now()): boolean {
  if (!name.startsWith(TEMP_PREFIX)) return false;
  const m = /^\.spillway-tmp-(\d+)-(?:at([0-9a-f]{8})-)?/.exec(name);
  const owner = m ? (m[2] ? `${m[1]}@${m[2]}` : m[1]!) : '';
  return now - mtimeMs > STALE_AFTER_MS || writerState(owner) === 'gone';
}

