// OpenHands (SDK and CLI): an observation too large for the context goes to
// `<persistence_dir>/observations/<tool>_output_<sha256[:8]>.txt`. The SDK's
// persistence_dir is whatever the caller passes; the CLI documents
// `~/.openhands/conversations` (one folder per conversation) as its store.
import * as path from 'node:path';
import type { Source } from './source';
import { describeNamedFiles, holdsNamed, wholeFolder } from './common';

const OBSERVATION_FILE = /^(.+)_output_([0-9a-f]{8})\.txt$/;
const SHELL_TOOL = /terminal|bash|shell|cmd|command/i;

export const openhands: Source = {
  name: 'openhands',
  // conversations/<id>/observations, with a level to spare for a nested persistence_dir.
  defaultRoots: (dirs) => [{ path: path.join(dirs.home, '.openhands', 'conversations'), depth: 3 }],
  claim(dir) {
    if (path.basename(dir.path) !== 'observations' || !holdsNamed(dir.entries, OBSERVATION_FILE)) return [];
    return [{ source: 'openhands', dir: dir.path, owns: [] }];
  },
  async describe(claim) {
    const { blobs, skipped, listed } = await describeNamedFiles(claim.dir, OBSERVATION_FILE, (m) => ({
      tool: m[1],
      kind: SHELL_TOOL.test(m[1]!) ? 'shell-output' : 'tool-result',
      attribution: 'name',
    }));
    if (blobs.length === 0) return undefined;
    return {
      session: { source: 'openhands', id: path.basename(path.dirname(claim.dir)), dir: claim.dir, skipped, notes: [] },
      blobs,
      dependsOn: [],
      blobFolders: wholeFolder(claim.dir, listed, blobs.length),
    };
  },
};
