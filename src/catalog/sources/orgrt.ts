// orgrt tool-spill: `<base>/tool-results/<roleId>/<file>`, one session per role.
import * as path from 'node:path';
import type { Source } from './source';
import { describeManifestFolder, wholeFolder } from './common';

export const orgrt: Source = {
  name: 'orgrt',
  defaultRoots: () => [],
  claim(dir) {
    if (path.basename(dir.path) !== 'tool-results') return [];
    // Claude Code's tool-results/ holds files; orgrt's holds one folder per role.
    if (dir.entries.some((e) => e.isFile() && e.name !== '.DS_Store')) return [];
    return dir.entries
      .filter((e) => e.isDirectory())
      .map((e) => ({ source: 'orgrt' as const, dir: path.join(dir.path, e.name), owns: [path.join(dir.path, e.name)] }));
  },
  async describe(claim) {
    const folder = await describeManifestFolder(claim.dir);
    if (folder.blobs.length === 0) return undefined;
    for (const blob of folder.blobs) {
      // Its file names start with the tool name (`Bash-<id>.txt`, `Read_<id>.txt`).
      const tool = /^([A-Za-z][A-Za-z0-9]*)[-_]/.exec(blob.name)?.[1];
      if (blob.attribution === 'none' && tool) Object.assign(blob, { tool, attribution: 'name' });
    }
    return {
      session: { source: 'orgrt', id: path.basename(claim.dir), title: `role ${path.basename(claim.dir)}`, dir: claim.dir, skipped: folder.skipped, notes: [] },
      blobs: folder.blobs,
      dependsOn: [folder.manifest],
      blobFolders: wholeFolder(claim.dir, folder.listed, folder.blobs.length),
    };
  },
};
