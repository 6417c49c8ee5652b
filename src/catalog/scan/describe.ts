// Describing one claimed session: what its source says now, with the stamps
// that tell a later scan whether that still holds (scan(), scanSessions()
// and live updates all describe through this one function).
import * as path from 'node:path';
import type { ApiCall } from '../transcripts/calls';
import { refusal } from '../clean/clean';
import { stampOf, UNSETTLED, type IndexedClaim } from '../index/index-file';
import type { Described, SessionClaim, Source } from '../sources/source';
import type { TranscriptCache } from '../transcripts/transcripts';
import { deepestRoot, resolved } from '../../spill/inside';
import type { CatalogLogger, KnownRoot } from '../types';
import { describeLeftovers, isLeftoverClaim } from '../sources/leftovers';

export interface DescribeEnv {
  sources: readonly Source[];
  roots: readonly KnownRoot[];
  transcripts: TranscriptCache;
  logger: CatalogLogger;
  /** Keep parsed transcript state (live updates then read only what was appended). */
  keepTranscripts: boolean;
  /** A folder's stamp taken before this description reads it (a scan's walk took it), when there is one. */
  stamped?: (folder: string) => string | undefined;
  /** For a listing: see DescribeContext.listing. */
  listing?: boolean;
}

/**
 * What a claim's source describes now (described null: it holds nothing). `problem`: why it could not be
 * described (an unreadable folder or transcript); that is stored unsettled, to be described again next scan.
 */
export async function describeClaim(claim: SessionClaim, env: DescribeEnv): Promise<{ indexed: IndexedClaim; calls?: ApiCall[]; problem?: string }> {
  const source = env.sources.find((s) => s.name === claim.source)!;
  const root = rootOf(env.roots, claim.dir)?.path ?? path.dirname(claim.dir);
  // Folders are stamped before they are read: a change during the read leaves a stamp that no longer holds.
  const stamps = new Map<string, string>();
  const describedAt = Date.now();
  for (const folder of claimFolders(claim)) stamps.set(folder, env.stamped?.(folder) ?? stampOf(folder));
  let described: Described | undefined;
  try {
    const ctx = { transcripts: env.transcripts, logger: env.logger, root, refusal: (file: string) => refusal(file, env.roots), listing: env.listing };
    described = isLeftoverClaim(claim) ? await describeLeftovers(claim, ctx) : await source.describe(claim, ctx);
  } catch (err) {
    const problem = `cannot describe ${claim.dir}: ${(err as Error).message}`;
    return { indexed: { claim, described: null, stamps: [...stamps.keys()].map((folder) => [folder, UNSETTLED]), describedAt }, problem };
  }
  if (!described) return { indexed: { claim, described: null, stamps: [...stamps], describedAt } };
  // Files read (transcripts, manifests) and blob folders: stamped after, so a change
  // meanwhile is caught only by its mtime, which the racy check covers. A transcript keeps the
  // stamp its read took (before reading, of what it read): it is not stat'ed again.
  for (const file of [...described.dependsOn, ...described.blobs.map((b) => path.dirname(b.path))]) {
    if (!stamps.has(file)) stamps.set(file, env.transcripts.stampRead(file) ?? stampOf(file));
  }
  // A one-off scan of thousands of sessions would otherwise hold every transcript's state at once.
  if (!env.keepTranscripts) for (const file of described.dependsOn) env.transcripts.forget(file);
  const { calls, ...stored } = described;
  return { indexed: { claim, described: stored, stamps: [...stamps], describedAt }, calls };
}

/** The folders a claim's shape depends on: its own, those it owns, and for a fallback claim the folder it lists. */
export function claimFolders(claim: SessionClaim): string[] {
  return [claim.dir, ...claim.owns, ...(claim.fallback ? [path.dirname(claim.dir)] : [])];
}

/**
 * The deepest root containing the path (roots are resolved paths). The path is resolved once and each
 * root compared by prefix: path.relative for each of some twenty roots was a tenth of describing a session.
 */
export function rootOf(roots: readonly KnownRoot[], target: string): KnownRoot | undefined {
  return deepestRoot(roots, resolved(target));
}
