// Roo Code (VS Code extension `rooveterinaryinc.roo-cline`): a command's full
// output goes to `<globalStorage>/tasks/<taskId>/command-output/cmd-<id>.txt`.
import * as path from 'node:path';
import type { EnvDirs } from './roots';
import type { Source } from './source';
import { describeNamedFiles, wholeFolder } from './common';

const EXTENSION_ID = 'rooveterinaryinc.roo-cline';
/** VS Code builds whose user data may hold the extension's globalStorage. */
const EDITORS = ['Code', 'Code - Insiders', 'VSCodium'];
const OUTPUT_DIR = 'command-output';
const COMMAND_FILE = /^cmd-.+\.txt$/;

/** Where VS Code keeps user data on this platform (its own rule: XDG on Linux). */
function editorConfigHome(dirs: EnvDirs): string {
  if (process.platform === 'darwin') return path.join(dirs.home, 'Library', 'Application Support');
  if (process.platform === 'win32') return dirs.env.APPDATA || path.join(dirs.home, 'AppData', 'Roaming');
  return dirs.env.XDG_CONFIG_HOME || path.join(dirs.home, '.config');
}

export const rooCode: Source = {
  name: 'roo-code',
  // tasks/<taskId>/command-output is three levels below the extension's folder.
  defaultRoots: (dirs) => EDITORS.map((editor) => ({ path: path.join(editorConfigHome(dirs), editor, 'User', 'globalStorage', EXTENSION_ID), depth: 3 })),
  // Claimed at the task folder (before Claude Code, whose shape a uuid-named
  // folder with a sub-folder also fits); the command-output folder is owned.
  claim(dir) {
    if (path.basename(path.dirname(dir.path)) !== 'tasks') return [];
    if (!dir.entries.some((e) => e.isDirectory() && e.name === OUTPUT_DIR)) return [];
    return [{ source: 'roo-code', dir: path.join(dir.path, OUTPUT_DIR), owns: [] }];
  },
  async describe(claim) {
    const { blobs, skipped, listed } = await describeNamedFiles(claim.dir, COMMAND_FILE, () => ({ tool: 'command', kind: 'shell-output', attribution: 'name' }));
    if (blobs.length === 0) return undefined;
    return {
      session: { source: 'roo-code', id: path.basename(path.dirname(claim.dir)), dir: claim.dir, skipped, notes: [] },
      blobs,
      dependsOn: [],
      blobFolders: wholeFolder(claim.dir, listed, blobs.length),
    };
  },
};
