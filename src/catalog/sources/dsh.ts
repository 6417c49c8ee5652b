// dsh: `<root>/session-<first 12 hex of sha256(sessionId)>/<random hex>-<safeName>`.
import * as path from 'node:path';
import type { Source } from './source';
import { describeManifestFolder, wholeFolder } from './common';

const SESSION_DIR = /^session-[0-9a-f]{12}$/;
const BLOB_NAME = /^([0-9a-f]{6,})-(.+)$/;

export const dsh: Source = {
  name: 'dsh',
  // Its root is configured or a private mkdtemp folder: found under user roots by shape.
  defaultRoots: () => [],
  claim(dir) {
    if (!SESSION_DIR.test(path.basename(dir.path))) return [];
    if (!dir.entries.some((e) => e.isFile() && BLOB_NAME.test(e.name))) return [];
    return [{ source: 'dsh', dir: dir.path, owns: [] }];
  },
  async describe(claim) {
    const folder = await describeManifestFolder(claim.dir);
    const blobs = folder.blobs.filter((b) => b.attribution !== 'none' || BLOB_NAME.test(b.name));
    if (blobs.length === 0) return undefined;
    for (const blob of blobs) {
      const safeName = BLOB_NAME.exec(blob.name)?.[2];
      if (blob.attribution === 'none' && safeName) Object.assign(blob, { tool: safeName.replace(/\.(txt|log|json)$/, ''), attribution: 'name' });
    }
    return {
      session: { source: 'dsh', id: path.basename(claim.dir).replace(/^session-/, ''), dir: claim.dir, skipped: folder.skipped, notes: [] },
      blobs,
      dependsOn: [folder.manifest],
      blobFolders: wholeFolder(claim.dir, folder.listed, blobs.length),
    };
  },
};
