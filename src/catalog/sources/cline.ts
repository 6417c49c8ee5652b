// Cline (older releases): a command's output too large for the context goes to
// `$TMPDIR/cline/large-output-*.log`; nothing on disk names the task.
import * as path from 'node:path';
import type { Source } from '../source';
import { describeNamedFiles, holdsNamed } from './common';

export const CLINE_DIR = 'cline';
export const CLINE_FILE = /^large-output-.+\.log$/;
export const CLINE_SESSION_ID = 'cline-large-outputs';

export const cline: Source = {
  name: 'cline',
  // A folder of TMPDIR: only Cline's own logs in it may ever be deleted.
  defaultRoots: (dirs) => [{ path: path.join(dirs.tmp, CLINE_DIR), depth: 0, files: CLINE_FILE }],
  claim(dir) {
    if (path.basename(dir.path) !== CLINE_DIR || !holdsNamed(dir.entries, CLINE_FILE)) return [];
    return [{ source: 'cline', dir: dir.path, owns: [] }];
  },
  async describe(claim) {
    const { blobs, skipped } = await describeNamedFiles(claim.dir, CLINE_FILE, () => ({ tool: 'command', kind: 'shell-output', attribution: 'name' }));
    if (blobs.length === 0) return undefined;
    return {
      session: { source: 'cline', id: CLINE_SESSION_ID, title: 'Cline large command outputs', dir: claim.dir, skipped, notes: [] },
      blobs,
      dependsOn: [],
    };
  },
};
