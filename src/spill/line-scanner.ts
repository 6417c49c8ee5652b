// One streaming pass over the elided middle of an output: failure-looking lines found, counted by shape
// (numbers and hashes masked), and the latest kept, without holding the middle.

import { failureRank, isFailureLine } from './salience';
import { countNewlines, decodeWithin, utf8FloorBoundary } from './text';

/** Only the first bytes of a line are matched (a 50 MB line is not a log line). */
const MATCH_WINDOW = 4096;
/** Size of the ring that keeps the latest candidates once SHAPES_KEPT shapes are known. */
const CANDIDATES_KEPT = 16;
export interface Candidate {
  lineNo: number;
  start: number;
  text: string;
  /** The line with its numbers masked: repeated progress noise shares one shape. */
  shape: string;
  /** How many scanned failure lines had this shape. */
  repeats: number;
  /** failureRank: verdicts first, passing tests' lines last. */
  rank: number;
  /** A verdict's next line when it is indented: where it happened or its first detail (rustc's `  --> src/x.rs:4:5`, a stack's `    at f (x.js:3:9)`, Go's `    x_test.go:12: got 1`). */
  next?: { text: string; start: number };
}

/** Distinct failure-line shapes remembered per rank (bounded memory); later new shapes go to a small ring. */
const SHAPES_KEPT = 256;
/** Stored text of a candidate (it is shown up to SALIENT_LINE_MAX anyway). */
const CANDIDATE_TEXT_MAX = 512;

// A line can only be a failure line if it holds one of these stems; finding
// them across a whole chunk first keeps the scan near memchr speed. Every line
// salience.ts flags holds one (a test feeds each flagged line through the scan).
// The text is searched as latin1: `\xe2\x97\x8f` is jest's `●`, then the
// crosses ✕ ✖ ✗ ✘, × and ❌.
const FAILURE_STEMS = [
  'err', 'fail', 'fatal', 'fault', 'panic', 'exception', 'exit', 'traceback', 'assert', 'abort', 'dumped', 'denied',
  'killed', 'terminate', 'timed out', 'out of memory', 'overflow', 'undefined reference', 'illegal', 'exceeded',
  'unable', 'unreachable', 'stop.', 'backoff', 'not ok', 'not found', 'not permitted', 'not known', 'not a dir',
  'no such file', 'no space', 'no route', 'cannot', "can't", 'could', 'conflict', 'refused', 'reset by', 'read-only',
  'invalid', 'in use', 'unrecognized', 'unknown', 'is a dir', 'too many', 'forbidden', 'unauthorized', 'unavailable',
  'bad request', 'bad gateway', 'gateway timeout', 'rspec ', 'econn', 'eaddr', 'eacces', 'enoent', 'enospc', 'emfile',
  'etimedout', 'eperm', 'ehostun', 'sigsegv', 'sigabrt', 'sigkill', 'sigbus', 'sigill', 'sigfpe', 'curl: (',
  'unterminated', 'not recog', 'double free', 'undefined symbol', 'non-zero', 'nonzero', 'complete success',
  'rejected', 'reformat', 'code style', 'keyboardinterrupt', 'sudo: ', 'pkg-config', 'attempt to', 'ora-', 'hangup',
  'alarm clock', 'breakpoint trap', 'user defined signal', 'timer expired', 'bad system call', 'stack fault',
  'argument list', 'bad file desc', 'resource busy', 'stale file', 'not connected', 'file busy', 'file exists', 'not empty',
  // glibc's heap checks by their words (`free(): invalid pointer`): a stem of a common first letter (`malloc`)
  // slowed the scan by 5-8%.
  'corrupted', 'unaligned',
  // The shell's own lines (`\bsh:` below): a script's name may end in anything, so its messages too.
  'bash:', 'zsh:', 'dash:', 'ksh:', 'sh: line ', 'unbound variable', 'readonly variable', 'bad substitution',
  'operator expected', 'integer expression', 'ambiguous redirect',
  '\xe2\x97\x8f', '\xe2\x9c\x95', '\xe2\x9c\x96', '\xe2\x9c\x97', '\xe2\x9c\x98', '\xc3\x97', '\xe2\x9d\x8c',
];
export const FAILURE_STEM = new RegExp(`${literalTrie(FAILURE_STEMS)}|\\be:|\\bsh:|go:\\d`, 'gi');

/**
 * Lower-case literals as one regex source in which those sharing a start share it (`c(?:annot|ould)`): the
 * regex then tries one branch per position, not each word (a flat alternation scanned at half the speed).
 */
function literalTrie(words: readonly string[]): string {
  interface TrieNode { end: boolean; next: Map<string, TrieNode> }
  const root: TrieNode = { end: false, next: new Map() };
  for (const word of words) {
    let node = root;
    for (const ch of word.toLowerCase()) {
      let child = node.next.get(ch);
      if (!child) node.next.set(ch, (child = { end: false, next: new Map() }));
      node = child;
    }
    node.end = true;
  }
  const source = (node: TrieNode): string => {
    const alternatives = [...node.next].map(([ch, child]) => ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') + source(child));
    if (alternatives.length === 0) return '';
    const body = alternatives.length === 1 ? alternatives[0]! : `(?:${alternatives.join('|')})`;
    return node.end ? `(?:${body})?` : body;
  };
  return source(root);
}

/**
 * Streams bytes, counts newlines, and keeps the first/last failure lines with
 * their line numbers. Only the first MATCH_WINDOW bytes of a line are matched,
 * however the bytes arrive (one Buffer or many file chunks): same result.
 */
export class LineScanner {
  // Per shape: its first two and last two occurrences, so one of them is still
  // in the middle after the final cut moves the head and tail a little.
  // One table and one ring per failureRank: a crowd of mentions or passing tests' lines never pushes a verdict out.
  private readonly shapes = [0, 1, 2].map(() => new Map<string, { early: Candidate[]; late: Candidate[]; count: number }>());
  private readonly overflow: Candidate[][] = [[], [], []];
  /** Newlines fed so far. */
  newlines = 0;
  private lineNo: number;
  private lineStart: number;
  private pos: number;
  /** The first bytes of a line that started in an earlier chunk. */
  private carried: Segment | undefined;
  /**
   * Of that line, once it holds a '\r': the first bytes after its latest '\r' (`last`), the segment that '\r'
   * ended (`ended`, when another '\r' came before it) and whether the line so far ends with a '\r' (see lastSegment).
   */
  private segments: { last: Segment; ended?: Segment; endsWithCr: boolean } | undefined;
  /** The verdict on the line just considered, until the line after it is seen (see Candidate.next). */
  private awaiting: Candidate | undefined;

  constructor(start: number, startLineNo: number) {
    this.pos = start;
    this.lineStart = start;
    this.lineNo = startLineNo;
  }

  feed(chunk: Buffer): void {
    let i = 0;
    if (this.pos > this.lineStart) {
      const nl = chunk.indexOf(0x0a);
      this.keep(chunk.subarray(0, nl < 0 ? chunk.length : nl), this.pos);
      if (nl < 0) {
        this.pos += chunk.length;
        return;
      }
      this.closeCarried(this.pos + nl + 1);
      i = nl + 1;
    }
    const lastNl = chunk.lastIndexOf(0x0a);
    if (lastNl >= i) {
      const region = chunk.subarray(i, lastNl + 1);
      const text = region.toString('latin1'); // byte offsets == string offsets
      const lineAt = (ls: number): Buffer => region.subarray(ls, Math.min(text.indexOf('\n', ls), ls + MATCH_WINDOW));
      if (this.awaiting) this.attachNext(lineAt(0), this.lineNo, this.pos + i);
      let counted = 0;
      let lineNo = this.lineNo;
      // The next '\r' at or after the line in hand (-1: none in the region), found once for all its lines.
      let cr = -2;
      FAILURE_STEM.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = FAILURE_STEM.exec(text)) !== null) {
        const ls = text.lastIndexOf('\n', m.index - 1) + 1;
        const le = text.indexOf('\n', m.index);
        lineNo += countNewlines(region, counted, ls);
        counted = ls;
        if (cr !== -1 && cr < ls) cr = text.indexOf('\r', ls);
        const seg = cr !== -1 && cr < le ? lastSegment(text, ls, le) : undefined;
        const shown = seg && this.consider(region.subarray(seg.start, Math.min(seg.end, seg.start + MATCH_WINDOW)), lineNo, this.pos + i + seg.start);
        if (!shown && m.index - ls < MATCH_WINDOW) this.consider(lineAt(ls), lineNo, this.pos + i + ls);
        // The line after a verdict, unless it only begins here (then closeCarried or the next chunk sees it).
        if (this.awaiting && le + 1 < region.length) this.attachNext(lineAt(le + 1), lineNo + 1, this.pos + i + le + 1);
        FAILURE_STEM.lastIndex = le + 1;
      }
      const regionNewlines = countNewlines(region, 0, region.length);
      this.newlines += regionNewlines;
      this.lineNo += regionNewlines;
      this.lineStart = this.pos + lastNl + 1;
      i = lastNl + 1;
    }
    if (i < chunk.length) this.keep(chunk.subarray(i), this.pos + i);
    this.pos += chunk.length;
  }

  /** Closes a last line that has no newline inside the scanned range. */
  finish(): void {
    if (this.pos > this.lineStart) this.considerCarried();
  }

  /** In line order: a few occurrences of each shape (with the shape's count), plus the overflow ring. */
  candidates(): Candidate[] {
    const out: Candidate[] = this.overflow.flat();
    for (const table of this.shapes) {
      for (const { early, late, count } of table.values()) {
        for (const c of [...early, ...late]) out.push({ ...c, repeats: count });
      }
    }
    return out.sort((a, b) => a.lineNo - b.lineNo);
  }

  /** Keeps what is matched of a carried line's next `part` (which starts at byte `at`): its first bytes, and its segments. */
  private keep(part: Buffer, at: number): void {
    if (part.length === 0) return;
    (this.carried ??= new Segment(at)).add(part);
    const cr = part.lastIndexOf(0x0d);
    const segments = this.segments;
    if (cr === -1) {
      if (segments) segments.last.add(part);
    } else {
      // The segment this part's last '\r' ends: from the '\r' before it, in this part or an earlier one.
      const before = cr > 0 ? part.lastIndexOf(0x0d, cr - 1) : -1;
      let ended: Segment | undefined;
      if (before !== -1) ended = new Segment(at + before + 1).add(part.subarray(before + 1, cr));
      else if (segments) ended = segments.last.add(part.subarray(0, cr));
      this.segments = { last: new Segment(at + cr + 1).add(part.subarray(cr + 1)), ended, endsWithCr: false };
    }
    if (this.segments) this.segments.endsWithCr = part[part.length - 1] === 0x0d;
  }

  /** Considers the carried line as lastSegment has it: its last segment when that is a failure line, else its first bytes. */
  private considerCarried(): void {
    const first = this.carried?.text() ?? Buffer.alloc(0);
    if (this.awaiting) this.attachNext(first, this.lineNo, this.lineStart);
    const segments = this.segments;
    // A final '\r' (CRLF) ends the line, not a segment: then the segment before it is the last, if a '\r' came before.
    const seg = segments && (segments.endsWithCr ? segments.ended : segments.last);
    if (!(seg && seg.bytes > 0 && this.consider(seg.text(), this.lineNo, seg.start))) this.consider(first, this.lineNo, this.lineStart);
    this.carried = undefined;
    this.segments = undefined;
  }

  private closeCarried(nextLineStart: number): void {
    this.considerCarried();
    this.newlines++;
    this.lineNo++;
    this.lineStart = nextLineStart;
  }

  /** Line `lineNo` (its first bytes, `raw`) as the next line of the verdict awaiting one, if it is that verdict's next and indented. */
  private attachNext(raw: Buffer, lineNo: number, start: number): void {
    const verdict = this.awaiting!;
    this.awaiting = undefined;
    if (verdict.lineNo + 1 !== lineNo) return;
    const text = lineText(raw);
    if (/^\s+\S/.test(text)) verdict.next = { text: text.slice(0, CANDIDATE_TEXT_MAX), start };
  }

  /** Keeps line `lineNo` (its first bytes, `raw`) when it is a failure line (then true). */
  private consider(raw: Buffer, lineNo: number, start: number): boolean {
    this.awaiting = undefined;
    const text = lineText(raw);
    if (!isFailureLine(text)) return false;
    const shape = shapeOf(text);
    const rank = failureRank(text);
    const shapes = this.shapes[rank]!;
    const overflow = this.overflow[rank]!;
    const known = shapes.get(shape);
    const c: Candidate = { lineNo, start, text: text.slice(0, CANDIDATE_TEXT_MAX), shape, repeats: 1, rank };
    // A repeat past a shape's first two gets no next line: a log of 100,000 exceptions and their stacks
    // would decode every frame after them (20% slower), and a shape shows its first occurrence in the middle.
    let early = true;
    if (known) {
      known.count++;
      if (known.early.length < 2) known.early.push(c);
      else {
        early = false;
        known.late.push(c);
        if (known.late.length > 2) known.late.shift();
      }
    } else if (shapes.size < SHAPES_KEPT) {
      shapes.set(shape, { early: [c], late: [], count: 1 });
    } else {
      overflow.push(c);
      if (overflow.length > CANDIDATES_KEPT) overflow.shift();
    }
    if (rank === 0 && early) this.awaiting = c;
    return true;
  }
}

/** The first MATCH_WINDOW bytes of a carried line, or of one of its segments, gathered as its parts come. */
class Segment {
  private readonly parts: Buffer[] = [];
  bytes = 0;

  constructor(readonly start: number) {}

  add(part: Buffer): this {
    if (this.bytes < MATCH_WINDOW && part.length > 0) {
      const take = Buffer.from(part.subarray(0, MATCH_WINDOW - this.bytes));
      this.parts.push(take);
      this.bytes += take.length;
    }
    return this;
  }

  text(): Buffer {
    return Buffer.concat(this.parts, this.bytes);
  }
}

/**
 * Where the line from `ls` to `le` (its '\n') shows its last segment, as a terminal does: a '\r' inside a line
 * (progress bars, curl's meter) sends the cursor back, and what follows the last one is what stays on screen,
 * such as the error glued to the end of a long meter. A final '\r' (CRLF) ends the line, not a segment.
 * Undefined when the line holds no other '\r', or nothing follows it.
 */
function lastSegment(text: string, ls: number, le: number): { start: number; end: number } | undefined {
  const end = le > ls && text.charCodeAt(le - 1) === 0x0d ? le - 1 : le;
  const cr = end > ls ? text.lastIndexOf('\r', end - 1) : -1;
  return cr >= ls && cr + 1 < end ? { start: cr + 1, end } : undefined;
}

/** A line's text as matched and shown: its first bytes decoded (a character cut at their end left out), without a final `\r`. */
function lineText(raw: Buffer): string {
  return decodeWithin(raw.subarray(0, utf8FloorBoundary(raw, raw.length))).replace(/\r$/, '');
}

/**
 * A failure line with what changes from one repeat to the next masked: UUIDs, hex ids holding a digit (hashes,
 * addresses, request ids) and numbers. Retry noise that names a new request each time is then one shape, not
 * thousands that fill the table before the root cause comes.
 */
function shapeOf(text: string): string {
  return text.slice(0, 4 * SHAPE_CHARS).replace(VARYING, (m) => (m.length < 8 || m.includes('-') || /\d/.test(m) ? '#' : m)).slice(0, SHAPE_CHARS);
}

/** A line's shape is its first this many characters, once masked. */
const SHAPE_CHARS = 160;
/** A UUID, a word of 8+ hex letters and digits (masked only when it holds a digit: a hash, an id), or a number. */
const VARYING = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{8,}\b|\d+/gi;

