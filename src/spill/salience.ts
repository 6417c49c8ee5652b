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

/** Regexes as one, read as alternatives: each kept short enough to read on its own line. */
function oneOf(parts: readonly RegExp[], flags?: string): RegExp {
  return new RegExp(parts.map((r) => r.source).join('|'), flags);
}

// How the shell names the signals that end a command (strsignal's words) that no other rule knows.
const SIGNAL_DEATHS = 'Hangup|Alarm clock|Trace/breakpoint trap|User defined signal [12]|Profiling timer expired|Virtual timer expired|Bad system call|Stack fault';

// Terminal colour codes would glue `FAIL` to the escape's final letter.
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;
const FAILURE_WORD =
  /\b(?:errors?|failed|failures?|failing|fail|fatal|panic(?:ked|s)?|exceptions?|traceback|assert(?:ions?|s)?)\b/gi;
// TypeError, AssertionError, NullPointerException, ComparisonFailure, ...
const FAILURE_COMPOUND = /\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Failure)\b|\bERR!/g;
// Failures that name no failure word: crashes and signals, the shell (`Killed`, dash's `sh: 1: jq: not found`),
// the system's errno texts, test protocols (TAP's `not ok`, jest's `●`, a failed test's cross: ✕ ✗ ✘ ✖ × ❌,
// rspec's `rspec ./x_spec.rb:12 #`), linkers, make's `*** ... Stop.`, git's merge `CONFLICT (`, a non-zero
// exit status, a limit exceeded, Kubernetes' back-offs, apt's and Kotlin's `E:`/`e:`, Go's compiler
// (`x.go:3:5: undefined: y`), rake's `aborted!`; curl's exit line (`curl: (18) transfer closed with 12 bytes
// remaining to read`; older curls glue it to the progress meter's last update), sed's and parsers' `unterminated`,
// the shell's own lines, which it prints only for errors (`bash: x: unbound variable`, `./build.sh: line 3: [: too
// many arguments`, `zsh:1: ...`; not its warnings), kubectl's `The connection to the server ... was refused`,
// Windows' `... is not recognized as an internal or external command` and `Access is denied.`, glibc's `double free
// or corruption`, a linker's `Undefined symbols for architecture arm64:`, and an exit as compose and the old docker
// builder report it (`service "x" didn't complete successfully: exit 1`, `returned a non-zero code: 1`); git's
// `! [rejected]` push, black's `would reformat` and prettier's `Code style issues found`, Python's
// `KeyboardInterrupt`, sudo's `a password is required`, pkg-config's and ld's missing libraries, gcc's `compilation
// terminated.`, valgrind's `Invalid read of size 4`, git's `Aborting` and macOS' `Abort trap: 6`; Lua's runtime
// errors (`attempt to call a nil value`), `timeout`'s `dumped core`, the shell's line for a command other signals
// ended (`Trace/breakpoint trap`, `Alarm clock`, `Hangup`, `User defined signal 1`, alone on their line),
// Oracle's `ORA-00942:`, and the system's other errno texts as a program prints them (`mkdir: out: File exists`,
// `xargs: grep: Argument list too long`, `ls: /mnt/nfs: Stale file handle`); glibc's heap checks (`free(): invalid
// pointer`, `corrupted size vs. prev_size`), Kubernetes' failed events (`FailedScheduling`, `FailedMount`).
const FAILURE_PHRASE = oneOf(
  [
    /\bsegmentation fault\b|\b(?:core dumped|dumped core)\b|\billegal instruction\b|\bstack overflow\b|\boverflowed its stack\b/,
    /(?:^\s*|:\s+)(?:aborted|killed|terminated)\b(?![-./])|\baborted!|\boomkilled\b|\bterminate called\b|(?<!\bsend(?:ing|s)? (?:a )?)\bsig(?:segv|abrt|kill|bus|ill|fpe)\b/,
    /\bout of memory\b|\btimed out\b|\b(?:quota|deadline|call stack size|time limit|memory limit)[ _]exceeded\b/,
    /\bcommand not found\b|:\s*not found\s*$|\bno such file or directory\b|\bpermission denied\b|\boperation not permitted\b/,
    /\bno space left on device\b|\bread-only file system\b|\btoo many open files\b|: (?:is|not) a directory\b/,
    /\bconnection refused\b|\bconnection reset by peer\b|\bno route to host\b|\bnetwork is unreachable\b/,
    /\baddress already in use\b|\bname or service not known\b|\b(?:crashloop|imagepull)backoff\b|\berrimagepull\b/,
    /\b(?:was|were) (?:refused|rejected)\b|\bis not recognized as\b|\baccess (?:is )?denied\b|\bdouble free or corruption\b|\bundefined symbols? for\b/,
    /^\s*not ok\b|^\s*[\u25cf\u2715-\u2718\u00d7\u274c]\s|^rspec \S+:\d+ #/,
    /\bundefined reference to\b|\bcannot find module\b|\bERR_PNPM_\w|\*\*\*[^*]*\bstop\.\s*$|\bmerge conflict\b|^\s*conflict\s*\(/,
    /\bexit(?:ed|ing)?(?: with)? (?:status|code)\b[:=]?\s*[1-9]|^\s*e:\s|^[^\s:]+\.go:\d+:\d+:\s/,
    /(?::\s*exit|\bexited with)\s+[1-9]\d{0,2}\.?\s*$|\bnon-?zero (?:exit )?(?:code|status)\b|\bdid(?:n't| not) complete successfully\b/,
    /\[(?:remote )?rejected\]|\bwould (?:be )?reformat(?:ted)?\b|\bcode style issues\b|\bKeyboardInterrupt\b/,
    /^sudo: (?:a (?:password|terminal) is required|\d+ incorrect password)|\bpkg-config search path\b|\blibrary not found\b/,
    /^compilation terminated\b|\binvalid (?:read|write|free)\b|^aborting\s*$|\babort trap\b/,
    /curl: \(\d{1,3}\) \S|\bunterminated\b|\bORA-\d{5}:/,
    /\battempt to (?:call|index|perform arithmetic on|concatenate|get length of) an? (?:nil|boolean|number|string|table|function|userdata|thread) value\b|\battempt to compare (?:two \w+ values|\w+ with \w+)\b/,
    new RegExp(`^\\s*(?:${SIGNAL_DEATHS})(?: \\(core dumped\\))?\\s*$`),
    /^\s*(?:free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate)\(\): \w|\bcorrupted size vs\. prev_size\b|\bFailed(?:Scheduling|Mount|AttachVolume|Create\w*|Pull\w*|Sync|KillPod|\w*Hook)\b/,
    /^[\w./-]+: (?:.*: )?(?:too many levels of symbolic links|argument list too long|bad file descriptor|device or resource busy|resource temporarily unavailable|stale file handle|transport endpoint is not connected|text file busy|file exists|directory not empty)\s*$/,
    /^(?:\S*\/)?(?:ba|da|z|k)?sh(?::\s?line \d+|:\s?\d+)?:\s(?!warning\b)|^(?:\S*\.(?:ba|z|k)?sh|\.{0,2}\/\S*): line \d+: (?!warning\b)/,
  ],
  'gi',
);
// What only suggests a failure (ranked below a verdict): `Could not resolve host`, `unable to`, `cannot open`,
// `invalid option`, `unknown command`, a limit `exceeded`, errno names (`ECONNREFUSED`: retry noise names them
// too), HTTP's failing statuses, and a Go test's own message (`    x_test.go:12: got 1, want 2`, which t.Log
// prints alike).
const FAILURE_HEDGE = oneOf(
  [
    /\bcould ?not\b|\bcouldn't\b|\bunable to\b|\bcannot\b|\bcan't\b|\binvalid (?:argument|option)\b/,
    /\b(?:unrecognized|unknown) (?:option|command|argument|host)\b|\bexceeded\b|^\s+[^\s:]+_test\.go:\d+:\s/,
    /\be(?:connrefused|connreset|addrinuse|acces|noent|nospc|mfile|timedout|perm|hostunreach)\b/,
    /\b[45]\d\d (?:bad request|unauthorized|forbidden|not found|conflict|too many requests|bad gateway|service unavailable|gateway timeout)\b/,
  ],
  'gi',
);
// Python's qualified exceptions: `psycopg2.errors.UndefinedTable: ...`, `django.core.exceptions.ImproperlyConfigured` (after pytest's `E` too).
const QUALIFIED_EXCEPTION = /^\s*(?:E\s+)?(?:\w+\.)+(?:errors?|exceptions?)\.\w+(?::|$)/i;
// "0 errors", "no failures", "without errors", "errors: 0" report success ("non-zero exit status" does not).
const NEGATED_BEFORE = /(?:\b0|\bno|\bnot|\bwithout|(?<!-)\bzero)\s+$/i;
const NEGATED_AFTER = /^\s*[:=]\s*0\b/;
// ... unless a count follows the word: `unreachable=0 failed=1` is one failure.
const COUNTED_AFTER = /^\s*[:=]\s*[1-9]/;
// Part of a path or file name: `src/errors/index.ts`, `error-boundary.tsx`, `failures.log`.
const PATH_BEFORE = /[/\\][\w.-]*$/;
const PATH_AFTER = /^(?:[/\\]|[-_.][A-Za-z])/;

// The shell's line for a job a signal ended (`bash: line 1: 4242 Killed  ./x`), capitalised as the shell writes
// it: a count of something killed (`12 killed, 3 survived`, a mutation test's score) is no failure.
const JOB_ENDED = new RegExp(`\\b\\d+\\s+(?:Aborted|Killed|Terminated|${SIGNAL_DEATHS})\\b(?![-./])`, 'g');

/**
 * Each way a line can name a failure, and which of the success readings apply: a count of zero
 * after it ("errors: 0") only to a plain word (`KeyError: 0` is Python's failure line), a path
 * only to words (a phrase has spaces).
 */
const RULES: ReadonlyArray<{ re: RegExp; countAfter: boolean; path: boolean }> = [
  { re: FAILURE_WORD, countAfter: true, path: true },
  { re: FAILURE_COMPOUND, countAfter: false, path: true },
  { re: FAILURE_PHRASE, countAfter: false, path: false },
  { re: JOB_ENDED, countAfter: false, path: false },
  { re: FAILURE_HEDGE, countAfter: false, path: false },
];

/** True when the line carries a failure word that is not negated ("0 failed"). */
export function isFailureLine(line: string): boolean {
  const text = line.includes('\x1b') ? line.replace(ANSI, '') : line;
  if (QUALIFIED_EXCEPTION.test(text)) return true;
  for (const { re, countAfter, path } of RULES) {
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      const before = text.slice(Math.max(0, m.index - 12), m.index);
      const after = text.slice(m.index + m[0].length, m.index + m[0].length + 8);
      if ((NEGATED_BEFORE.test(before) && !COUNTED_AFTER.test(after)) || (countAfter && NEGATED_AFTER.test(after))) continue;
      if (path && (PATH_BEFORE.test(before) || PATH_AFTER.test(after))) continue;
      return true;
    }
  }
  return false;
}

// A failure as tools print their verdicts: `FAIL x`, Go's `--- FAIL: TestX`, `error[E0308]:`, tsc's and C#'s
// `error TS2322:`, eslint's `12:5  error  ...`, `TypeError: ...`, a line that starts with `Error` (Node's
// `Error: ...`, kubectl's `Error from server`, Terraform's `│ Error: ...`), Ruby's `... (NoMethodError)`, `FAILED`,
// make's `***`, npm's `npm ERR!` and `npm error`, a log's level in capitals (Maven's `[ERROR]`,
// `2024-01-01 12:00:00 ERROR app: ...`) or `level=error`.
const VERDICT = oneOf(
  [
    /^\s*(?:FAILURE|PANIC|E)\b|\bFAIL(?:ED)?\b|\b(?:ERROR|FATAL)\b|\blevel=(?:error|fatal|panic)\b|\bnpm error\b|\bERR!/,
    /\b(?:error|fatal|panic)(?:\[[^\]]{0,64}\])?:|\berror [A-Z]{1,4}\d{2,5}:|^\s*\d+:\d+\s+error\s/,
    /\b[A-Z]\w*(?:Error|Exception|Failure)\b(?::|$)|\(\w*(?:Error|Exception)\)\s*$|^[\s\u2502|>]*(?:Uncaught )?Error\b|^\s*Exception\b/,
    /Traceback \(most recent call last\)|\*\*\*[^*]*\bError\b|\bpanicked\b/,
  ],
);
// A passing test's line, whose name may say "error": `✓ throws an error`, `PASS x`, TAP's `ok 3`, pytest's `PASSED`.
const PASSING = /^\s*(?:[\u2713\u2714\u221a]|PASS\b|ok\s)|\sPASSED\b/;

/**
 * How a failure line ranks for the digest's few lines: 0 a verdict (a failure as tools print
 * it, or a phrase only a failure prints), 1 a failure word in passing or a hedge, 2 a passing test's line. Only for lines isFailureLine flags.
 */
export function failureRank(line: string): 0 | 1 | 2 {
  const text = line.includes('\x1b') ? line.replace(ANSI, '') : line;
  if (PASSING.test(text) && !/FAIL/.test(text)) return 2;
  if (VERDICT.test(text) || QUALIFIED_EXCEPTION.test(text)) return 0;
  for (const phrase of [FAILURE_PHRASE, JOB_ENDED]) {
    phrase.lastIndex = 0;
    if (phrase.test(text)) return 0;
  }
  return 1;
}
