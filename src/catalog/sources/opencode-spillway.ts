// What Spillway's opencode plugin wrote: `<XDG_DATA_HOME>/opencode/spillway/<session>/`,
// one `<call id>.log` per captured bash output with Spillway's manifest, attributed
// to opencode, its session and the tool call. Part of the opencode source (opencode.ts).
import * as path from 'node:path';
import { MANIFEST_NAME } from '../../spill/manifest';
import type { Described, DirListing, RootSpec, SessionClaim } from './source';
import type { EnvDirs } from './roots';
import { describeManifestFolder, wholeFolder } from './common';

/** The claim's hint that marks one of these folders. */
export const SPILLWAY_LAYOUT = { layout: 'spillway' };

export function spillwayCaptureRoot(dirs: EnvDirs): RootSpec {
  return { path: path.join(dirs.xdgData, 'opencode', 'spillway'), depth: 1 };
}

export function claimSpillwayCaptures(dir: DirListing): SessionClaim[] {
  const parent = path.dirname(dir.path);
  if (path.basename(parent) !== 'spillway' || path.basename(path.dirname(parent)) !== 'opencode') return [];
  if (!dir.entries.some((e) => e.isFile() && e.name === MANIFEST_NAME)) return [];
  return [{ source: 'opencode', dir: dir.path, owns: [], hint: SPILLWAY_LAYOUT }];
}

export async function describeSpillwayCaptures(claim: SessionClaim): Promise<Described | undefined> {
  const folder = await describeManifestFolder(claim.dir);
  if (folder.blobs.length === 0) return undefined;
  const id = folder.sessionId ?? path.basename(claim.dir);
  return {
    session: { source: 'opencode', id, title: `opencode session ${id}`, dir: claim.dir, skipped: folder.skipped, notes: [] },
    blobs: folder.blobs,
    dependsOn: [folder.manifest],
    blobFolders: wholeFolder(claim.dir, folder.listed, folder.blobs.length),
  };
}
