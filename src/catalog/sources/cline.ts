// Cline (older releases): a command's output too large for the context goes to
// `$TMPDIR/cline/large-output-*.log`; nothing on disk names the task.
import { tmpFolderSource } from './common';

export const CLINE_SESSION_ID = 'cline-large-outputs';

export const cline = tmpFolderSource({
  name: 'cline',
  folder: 'cline',
  files: /^large-output-.+\.log$/,
  glob: 'large-output-*.log',
  sessionId: CLINE_SESSION_ID,
  title: 'Cline large command outputs',
  facts: () => ({ tool: 'command', kind: 'shell-output', attribution: 'name' }),
});
