// goose: an MCP tool response over its size limit goes to
// `$TMPDIR/goose_mcp_responses/mcp_response_<UTC %Y%m%d_%H%M%S[.%f]>.txt`;
// nothing names the tool or the session on disk.
import * as path from 'node:path';
import type { Source } from '../source';
import { describeNamedFiles, holdsNamed } from './common';

export const GOOSE_DIR = 'goose_mcp_responses';
/** goose's own file names (older goose wrote whole seconds, newer adds microseconds). */
export const GOOSE_FILE = /^mcp_response_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})(\.\d+)?\.txt$/;
export const GOOSE_SESSION_ID = 'goose-mcp-responses';

/** The UTC time written in the name (its mtime is the fallback). */
function nameTime(m: RegExpExecArray): string | undefined {
  const ms = m[7] ? m[7].slice(1, 4).padEnd(3, '0') : '000';
  const t = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${ms}Z`);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

export const goose: Source = {
  name: 'goose',
  // A folder of TMPDIR: only goose's own files in it may ever be deleted.
  defaultRoots: (dirs) => [{ path: path.join(dirs.tmp, GOOSE_DIR), depth: 0, files: GOOSE_FILE }],
  claim(dir) {
    if (path.basename(dir.path) !== GOOSE_DIR || !holdsNamed(dir.entries, GOOSE_FILE)) return [];
    return [{ source: 'goose', dir: dir.path, owns: [] }];
  },
  async describe(claim) {
    const { blobs, skipped } = await describeNamedFiles(claim.dir, GOOSE_FILE, (m) => {
      const createdAt = nameTime(m);
      return createdAt ? { createdAt } : {};
    });
    if (blobs.length === 0) return undefined;
    return {
      session: { source: 'goose', id: GOOSE_SESSION_ID, title: 'goose MCP responses', dir: claim.dir, skipped, notes: [] },
      blobs,
      dependsOn: [],
    };
  },
};
