// What Gemini CLI's shell tool (`run_shell_command`) hands the model, taken
// apart: `[<untrusted_context>\n]Output: <output>\n<trailer lines>[\n</untrusted_context>]`
// plus whatever was appended after it (a hook's note). The trailer is the
// lines Gemini adds after the output, in this order, each optional:
// `Exit Code: N`, `Signal: S`, `Background PIDs: ...`, `Process Group PGID: N`.
// A cancelled, timed-out or backgrounded command has another shape: undefined.

const OPEN = '<untrusted_context>\n';
const CLOSE = '\n</untrusted_context>';
const OUTPUT = 'Output: ';

/** Gemini's trailer lines, last first (the order they are taken off the end). */
const TRAILER_FROM_END: ReadonlyArray<RegExp> = [/^Process Group PGID: \d+$/, /^Background PIDs: [\d, ]+$/, /^Signal: \S.*$/, /^Exit Code: -?\d+$/];

export interface ShellContent {
  /** Text before the output (`<untrusted_context>\nOutput: `). */
  before: string;
  /** The command's output (stdout and stderr as Gemini captured them). */
  output: string;
  /** Gemini's lines after the output, in order. */
  trailer: string[];
  /** Text after the trailer (`\n</untrusted_context>` and anything appended). */
  after: string;
  /** The exit code Gemini reported (it omits 0), or undefined when a signal ended the command. */
  exitCode?: number;
  signal?: string;
}

/**
 * `display` is the result's `returnDisplay`: when it is the output itself (a
 * string Gemini shows the user), it says exactly where the output ends, so an
 * output whose own last line reads `Exit Code: 3` is not taken for the trailer.
 */
export function parseShellContent(text: string, display?: unknown): ShellContent | undefined {
  let inner = text;
  let before = '';
  let after = '';
  if (text.startsWith(OPEN)) {
    const close = text.lastIndexOf(CLOSE);
    if (close < OPEN.length) return undefined;
    before = OPEN;
    inner = text.slice(OPEN.length, close);
    after = text.slice(close);
  }
  if (!inner.startsWith(OUTPUT)) return undefined;
  before += OUTPUT;
  const body = inner.slice(OUTPUT.length);
  const exact = typeof display === 'string' && display !== '' && body.startsWith(`${display}\n`) ? body.slice(display.length + 1).split('\n') : undefined;
  const known = exact !== undefined && isTrailer(exact);
  const lines = known ? [display as string] : body.split('\n');
  const trailer: string[] = known ? exact : [];
  // Each kind at most once, in Gemini's order; the output keeps at least its first line.
  for (const kind of known ? [] : TRAILER_FROM_END) {
    if (lines.length > 1 && kind.test(lines[lines.length - 1]!)) trailer.unshift(lines.pop()!);
  }
  const exitLine = trailer.find((l) => l.startsWith('Exit Code: '));
  const signalLine = trailer.find((l) => l.startsWith('Signal: '));
  const signal = signalLine?.slice('Signal: '.length);
  const exitCode = exitLine !== undefined ? Number(exitLine.slice('Exit Code: '.length)) : signal === undefined ? 0 : undefined;
  return { before, output: lines.join('\n'), trailer, after, ...(exitCode !== undefined ? { exitCode } : {}), ...(signal !== undefined ? { signal } : {}) };
}

/** Whether `lines` are Gemini's trailer lines, in its order, each kind at most once. */
function isTrailer(lines: string[]): boolean {
  const order = [...TRAILER_FROM_END].reverse();
  let next = 0;
  for (const line of lines) {
    while (next < order.length && !order[next]!.test(line)) next++;
    if (next === order.length) return false;
    next++;
  }
  return true;
}

/** The text the model is given instead: Gemini's own frame and trailer around the digest, then where the whole output is. */
export function shellContentWith(content: ShellContent, digest: string, blobPath: string): string {
  const ending = content.exitCode !== undefined ? `the command exited with code ${content.exitCode}` : `the command was ended by signal ${content.signal ?? '(unknown)'}`;
  const note = `[spillway: ${ending}; its complete output (stdout and stderr) is in ${blobPath}]`;
  const body = digest.endsWith('\n') ? digest : `${digest}\n`;
  return `${content.before}${body}${[...content.trailer, note].join('\n')}${content.after}`;
}
