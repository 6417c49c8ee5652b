// opencode: every oversized tool output in one folder,
// `~/.local/share/opencode/tool-output/tool_<id>` (no session attribution on disk);
// and what Spillway's opencode plugin wrote (opencode-spillway.ts).
import * as path from 'node:path';
import type { Source } from './source';
import { describeManifestFolder, wholeFolder } from './common';
import { claimSpillwayCaptures, describeSpillwayCaptures, SPILLWAY_LAYOUT, spillwayCaptureRoot, spillwayCapturesRemote } from './opencode-spillway';

export const opencode: Source = {
  name: 'opencode',
  defaultRoots: (dirs) => [{ path: path.join(dirs.xdgData, 'opencode'), depth: 1 }, spillwayCaptureRoot(dirs)],
  claim(dir) {
    const captures = claimSpillwayCaptures(dir);
    if (captures.length > 0) return captures;
    if (path.basename(dir.path) !== 'tool-output') return [];
    if (!dir.entries.some((e) => e.isFile() && e.name.startsWith('tool_'))) return [];
    return [{ source: 'opencode', dir: dir.path, owns: [] }];
  },
  async describe(claim, ctx) {
    if (claim.hint?.layout === SPILLWAY_LAYOUT.layout) return describeSpillwayCaptures(claim, ctx);
    const folder = await describeManifestFolder(claim.dir);
    const blobs = folder.blobs.filter((b) => b.attribution !== 'none' || b.name.startsWith('tool_'));
    if (blobs.length === 0) return undefined;
    for (const blob of blobs) {
      if (blob.attribution === 'none') Object.assign(blob, { toolCallId: blob.name, attribution: 'name' });
    }
    return {
      session: { source: 'opencode', id: 'tool-output', title: 'opencode tool output', dir: claim.dir, skipped: folder.skipped, notes: [] },
      blobs,
      dependsOn: [folder.manifest],
      blobFolders: wholeFolder(claim.dir, folder.listed, blobs.length),
    };
  },
  // Only the plugin's sessions go to a bucket (opencode's own tool-output/ ties nothing to a session).
  remote: spillwayCapturesRemote,
};
