// goose: an MCP tool response over its size limit goes to
// `$TMPDIR/goose_mcp_responses/mcp_response_<UTC %Y%m%d_%H%M%S[.%f]>.txt`;
// nothing names the tool or the session on disk.
import { isIsoTime } from '../../spill/iso-time';
import { tmpFolderSource } from './common';

/** goose's own file names (older goose wrote whole seconds, newer adds microseconds). */
export const GOOSE_FILE = /^mcp_response_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})(\.\d+)?\.txt$/;
export const GOOSE_SESSION_ID = 'goose-mcp-responses';

/** The UTC time written in the name (its mtime is the fallback). */
function nameTime(m: RegExpExecArray): string | undefined {
  const ms = m[7] ? m[7].slice(1, 4).padEnd(3, '0') : '000';
  const text = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${ms}Z`;
  return isIsoTime(text) ? new Date(Date.parse(text)).toISOString() : undefined;
}

export const goose = tmpFolderSource({
  name: 'goose',
  folder: 'goose_mcp_responses',
  files: GOOSE_FILE,
  glob: 'mcp_response_*.txt',
  sessionId: GOOSE_SESSION_ID,
  title: 'goose MCP responses',
  facts: (m) => {
    const createdAt = nameTime(m);
    return createdAt ? { createdAt } : {};
  },
});
