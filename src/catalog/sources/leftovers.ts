// What a spill killed mid-write leaves: its temp (`.spillway-tmp-*`) in the
// store's root (Spillway's spills folder, a Claude Code session folder, a pi
// session folder). Whatever source owns the folder, its temps are listed as
// one more session of that folder, each blob marked `partial`, so they can be
// seen and cleaned. A temp whose writer still runs is a spill under way: not
// listed, and never deleted (clean checks the writer when it deletes).
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isTempName } from '../../spill/internal-names';
import { refusedKind } from '../../spill/regular-file';
import type { DescribeContext, Described, DirListing, SessionClaim } from './source';
import type { SourceName } from '../types';
import { notOurs, plainBlob } from './common';

/** The leftovers claim's folder key: the folder plus this glob-like name (never a real entry). */
const LEFTOVERS_NAME = '.spillway-tmp-*';
export const LEFTOVERS_SESSION_ID = 'spillway-partial-spills';

/** A claim for the temps in `dir`, owned by `source` (the folder's own source), when it holds any. */
export function leftoverClaims(dir: DirListing, source: SourceName): SessionClaim[] {
  if (!dir.entries.some((e) => e.isFile() && isTempName(e.name))) return [];
  return [{ source, dir: path.join(dir.path, LEFTOVERS_NAME), owns: [], fallback: true }];
}

export function isLeftoverClaim(claim: SessionClaim): boolean {
  return claim.fallback === true && path.basename(claim.dir) === LEFTOVERS_NAME;
}

/** Whether a session key (`<source>:<folder>`) is a folder's leftovers. */
export function isLeftoversKey(key: string): boolean {
  return key.endsWith(`${path.sep}${LEFTOVERS_NAME}`);
}

export async function describeLeftovers(claim: SessionClaim, ctx: Pick<DescribeContext, 'refusal'>): Promise<Described | undefined> {
  const dir = path.dirname(claim.dir);
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  const blobs: Described['blobs'] = [];
  let skipped = 0;
  // Loaded here only: it hashes its host at load (node:crypto, a few ms of every command's start).
  const { isStaleTemp } = await import('../../spill/internal-files.js');
  for (const name of names) {
    if (!isTempName(name)) continue;
    const file = path.join(dir, name);
    const stat = await fsp.lstat(file).catch(() => undefined);
    if (!stat || !isStaleTemp(name, stat.mtimeMs)) continue; // renamed into place meanwhile, or still being written
    // Never a symlink, FIFO or hard link, another user's file, or one clean could not delete (a shared folder).
    if (refusedKind(stat) || notOurs(stat) || (await ctx.refusal(file))) {
      skipped++;
      continue;
    }
    blobs.push(plainBlob({ path: file, name, symlink: false, stat: { size: stat.size, mtimeMs: stat.mtimeMs } }, { kind: 'partial' }));
  }
  if (blobs.length === 0) return undefined;
  const notes = [`partial spills in ${dir}: never completed (their writer was killed); clean removes them`];
  return {
    session: { source: claim.source, id: LEFTOVERS_SESSION_ID, title: 'partial spills (killed mid-write)', dir, skipped, notes },
    blobs,
    dependsOn: blobs.map((b) => b.path),
  };
}
