// Where index files live and how they are named, and the removal of those no run will read again
// (temporary files of writers that did not finish, indexes unused for a month).

import { futimesSync, lstatSync, readdirSync, unlinkSync, type Stats } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ownedByAnother } from '../../spill/private-folder';
import type { KnownRoot } from '../types';
import { INDEX_VERSION } from './trailer';
import { processState } from '../../common/process-state';

/** `$XDG_CACHE_HOME/spillway`, else `~/.cache/spillway`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(env.HOME || os.homedir(), '.cache');
  return path.join(base, 'spillway');
}

/** The index file of one catalog configuration (roots, depths, sources): the CLI and the extension share it when they agree. */
export function indexFileFor(cacheDir: string, roots: readonly KnownRoot[], sources: readonly string[]): string {
  const config = JSON.stringify([INDEX_VERSION, sources, roots.map((r) => [r.path, r.depth, r.sources, r.files?.source ?? null])]);
  return path.join(cacheDir, `catalog-${fnv1a64(config)}.jsonl`);
}

/**
 * FNV-1a (64 bits, over UTF-16 code units) as 16 hex digits: names an index, which needs no cryptographic hash
 * (every command would load `node:crypto` for it at its start; two configurations with one name would
 * only share an index, whose every session is still checked against the walk).
 */
function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) hash = BigInt.asUintN(64, (hash ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n);
  return hash.toString(16).padStart(16, '0');
}
/** A temporary index's name (IndexWriter.open): the index's, then its writer's process id and a unique tail. */
const LEFTOVER_TEMP = /^catalog-[0-9a-z-]+\.jsonl\.(\d+)\.[0-9a-z]+\.[0-9a-z]+\.tmp$/;
/** A temporary index written to this recently is left alone: a writer in another PID namespace (a container sharing the home) looks gone from here. */
const LEFTOVER_GRACE_MS = 60_000;
const DAY_MS = 24 * 60 * 60_000;
/** An index's name (indexFileFor). */
const INDEX_NAME = /^catalog-[0-9a-f]{16}\.jsonl$/;
/** An index no run has used for this long is removed: another version's, or one of roots no longer asked for (`--root`). */
const UNUSED_INDEX_MS = 30 * DAY_MS;

/**
 * Removes from `dir` what no run will read again: the temporary indexes of writers that did not finish (Ctrl-C
 * during a first scan of 100,000 blobs left one of tens of MB, and every interrupted run another), once not written
 * to for a minute and their process is gone (or a day old); and indexes unused for a month (each run marks the one it
 * reads: markUsed). Only this user's regular files so named; what cannot be removed stays, and is tried next time.
 */
export function removeLeftovers(dir: string, now = Date.now()): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = LEFTOVER_TEMP.exec(name)?.[1];
    if (pid === undefined && !INDEX_NAME.test(name)) continue;
    const file = path.join(dir, name);
    try {
      const st = lstatSync(file, { throwIfNoEntry: false });
      if (!st?.isFile() || ownedByAnother(st)) continue;
      const idle = now - st.mtimeMs;
      const left = pid === undefined ? idle >= UNUSED_INDEX_MS : idle >= LEFTOVER_GRACE_MS && (idle >= DAY_MS || !processRuns(Number(pid)));
      if (left) unlinkSync(file);
    } catch {
      // vanished meanwhile, or not ours to remove
    }
  }
}

/** Marks an index read as used (its mtime, at most daily: not a write per run), so removeLeftovers keeps it; `stat`: as opened. */
export function markUsed(fd: number, stat: Stats): void {
  try {
    if (Date.now() - stat.mtimeMs >= DAY_MS) futimesSync(fd, new Date(), new Date());
  } catch {
    // not markable (a read-only cache): then not removable either
  }
}

/** Whether process `pid` runs (one that is not this user's too); when that cannot be told, it is taken to run. */
function processRuns(pid: number): boolean {
  return processState(pid) !== 'gone';
}
