// Spillway's own folders: any folder holding a `spillway.jsonl` manifest
// (the engine's default root uses `session-<12 hex>` folders).
import * as path from 'node:path';
import { MANIFEST_NAME } from '../../spill/manifest';
import { spillwayDefaultRoot } from './roots';
import type { Source } from './source';
import { describeManifestFolder, wholeFolder } from './common';

export const spillway: Source = {
  name: 'spillway',
  defaultRoots: (dirs) => [{ path: spillwayDefaultRoot(dirs.env), depth: 1 }],
  claim(dir) {
    if (!dir.entries.some((e) => e.isFile() && e.name === MANIFEST_NAME)) return [];
    return [{ source: 'spillway', dir: dir.path, owns: [] }];
  },
  async describe(claim) {
    const folder = await describeManifestFolder(claim.dir);
    if (folder.blobs.length === 0) return undefined;
    return {
      session: {
        source: 'spillway',
        id: folder.sessionId ?? path.basename(claim.dir),
        dir: claim.dir,
        skipped: folder.skipped,
        notes: [],
      },
      blobs: folder.blobs,
      dependsOn: [folder.manifest],
      blobFolders: wholeFolder(claim.dir, folder.listed, folder.blobs.length),
    };
  },
};
