// Which lines look like a failure, and which tools read files. Kept apart from
// the digest so the policy, the digest and the benchmarks share one definition.

export type ToolKind = 'command' | 'file';

/** Lower-case, separators removed: `web_fetch`, `WebFetch`, `web-fetch` -> `webfetch`. */
export function normalizeToolName(toolName: string): string {
  const bare = toolName.includes('__') ? toolName.slice(toolName.lastIndexOf('__') + 2) : toolName;
  return bare.toLowerCase().replace(/[\s_\-.]/g, '');
}

// Tools whose result is (part of) a document: what matters is at the START.
const FILE_LIKE = new Set([
  'read', 'readfile', 'readmanyfiles', 'notebookread', 'view', 'cat', 'glob', 'grep', 'rg', 'search',
  'searchfiles', 'find', 'findfiles', 'ls', 'list', 'listdir', 'listfiles', 'listdirectory',
  'webfetch', 'fetch', 'websearch', 'googlewebsearch',
]);

// Tools that return a file's own content: spilling them would start a
// read -> spill -> read loop, so the policy never spills them.
const READ_LIKE = new Set([
  'read', 'readfile', 'readmanyfiles', 'notebookread', 'view', 'cat', 'readtextfile', 'viewfile', 'openfile',
]);

/** command-like (Bash, tests, builds: the end matters) or file-like (the start matters). */
export function toolKind(toolName: string): ToolKind {
  return FILE_LIKE.has(normalizeToolName(toolName)) ? 'file' : 'command';
}

export function isReadLikeTool(toolName: string): boolean {
  return READ_LIKE.has(normalizeToolName(toolName));
}

/** Share of the digest given to the head: 1/3 for commands, 2/3 for files. */
export function headWeight(kind: ToolKind): number {
  return kind === 'command' ? 1 / 3 : 2 / 3;
}

// Terminal colour codes would glue `FAIL` to the escape's final letter.
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;
const FAILURE_WORD =
  /\b(?:errors?|failed|failures?|failing|fail|fatal|panic(?:ked|s)?|exceptions?|traceback|assert(?:ions?|s)?)\b/gi;
// TypeError, AssertionError, NullPointerException, ...
const FAILURE_COMPOUND = /\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b|\bERR!/g;
// "0 errors", "no failures", "without errors", "errors: 0" report success.
const NEGATED_BEFORE = /(?:\b0|\bno|\bnot|\bwithout|\bzero)\s+$/i;
const NEGATED_AFTER = /^\s*[:=]\s*0\b/;
// Part of a path or file name: `src/errors/index.ts`, `error-boundary.tsx`, `failures.log`.
const PATH_BEFORE = /[/\\][\w.-]*$/;
const PATH_AFTER = /^(?:[/\\]|[-_.][A-Za-z])/;

/** True when the line carries a failure word that is not negated ("0 failed"). */
export function isFailureLine(line: string): boolean {
  const text = line.includes('\x1b') ? line.replace(ANSI, '') : line;
  for (const re of [FAILURE_WORD, FAILURE_COMPOUND]) {
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      const before = text.slice(Math.max(0, m.index - 12), m.index);
      const after = text.slice(m.index + m[0].length, m.index + m[0].length + 8);
      if (NEGATED_BEFORE.test(before) || NEGATED_AFTER.test(after)) continue;
      if (PATH_BEFORE.test(before) || PATH_AFTER.test(after)) continue;
      return true;
    }
  }
  return false;
}
