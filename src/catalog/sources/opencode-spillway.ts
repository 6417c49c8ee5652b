// What Spillway's opencode plugin wrote: `<XDG_DATA_HOME>/opencode/spillway/<session>/`,
// one `<call id>.log` per captured bash output with Spillway's manifest, attributed
// to opencode, its session and the tool call; the plugin's record of the
// session's API calls beside them (opencode-calls.ts) gives the session its
// calls and each blob the turn of the call that asked for it. Part of the
// opencode source (opencode.ts).
import * as path from 'node:path';
import { MANIFEST_NAME } from '../../spill/manifest';
import { remoteReading, type DescribeContext, type Described, type DirListing, type RemoteReading, type RootSpec, type SessionClaim } from './source';
import type { EnvDirs } from './roots';
import { describeManifestFolder, recordedBlob, wholeFolder } from './common';
import { CALLS_FILE, opencodeCallsListingReducer, opencodeCallsReducer, type OpencodeCallsState } from './opencode-calls';

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

export async function describeSpillwayCaptures(claim: SessionClaim, ctx: DescribeContext): Promise<Described | undefined> {
  const folder = await describeManifestFolder(claim.dir);
  if (folder.blobs.length === 0) return undefined;
  const id = folder.sessionId ?? path.basename(claim.dir);
  const callsFile = path.join(claim.dir, CALLS_FILE);
  const read = await ctx.transcripts.read(callsFile, ctx.listing ? opencodeCallsListingReducer : opencodeCallsReducer);
  const state = read?.state;
  for (const blob of folder.blobs) atTurn(blob, state);
  return {
    session: { source: 'opencode', id, title: titleOf(id), dir: claim.dir, skipped: folder.skipped + (read?.skipped ?? 0), notes: [] },
    blobs: folder.blobs,
    // The record is a dependency too: a call appended to it changes no blob.
    dependsOn: [folder.manifest, callsFile],
    blobFolders: wholeFolder(claim.dir, folder.listed, folder.blobs.length),
    ...(state && state.calls.length > 0 ? { calls: state.calls } : {}),
  };
}

/** In a bucket the blobs are the plugin's, each with its record; the calls record's copy gives their turns. */
export const spillwayCapturesRemote: RemoteReading = remoteReading<OpencodeCallsState>({
  reducer: opencodeCallsReducer,
  session: (state) => ({ ...(state.sessionId ? { id: state.sessionId, title: titleOf(state.sessionId) } : {}), calls: state.calls }),
  blob: (file, stat, record, state) => atTurn(recordedBlob(file, stat, record), state),
});

const titleOf = (id: string): string => `opencode session ${id}`;

/** A blob at the turn of the API call that issued its tool call. */
function atTurn(blob: Described['blobs'][number], state: OpencodeCallsState | undefined): Described['blobs'][number] {
  const issuer = blob.toolCallId !== undefined ? state?.issuedBy.get(blob.toolCallId) : undefined;
  if (issuer !== undefined) blob.turn ??= issuer + 1;
  return blob;
}
