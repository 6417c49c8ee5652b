// The bounded text the model sees instead of a spilled result: head + notice +
// tail cut at line boundaries, the notice's size reserved inside the budget,
// and failure-looking lines from the elided middle kept when they fit.
//
// One planner serves text in memory and files of any size: it only ever needs
// the first and last few KB plus one streaming pass over the middle, so
// `digestFile` gives exactly what `digestText` gives on the same bytes.
import { promises as fsp, constants as C } from 'node:fs';
import { failureRank, headWeight, isFailureLine, toolKind, type ToolKind } from './salience';
import { countNewlines, decodeWithin, formatCount, lineCountFrom, utf8Bytes, utf8CeilBoundary, utf8FloorBoundary } from './text';
import { DROP_ITEM, classifyOutput, formatJsonPath, planValueDigest, replaceLeaves, sectionLayout } from './value';

export { toolKind, isFailureLine, isReadLikeTool, type ToolKind } from './salience';

export interface DigestOptions {
  /** Most UTF-8 bytes the digest may take, notice included. */
  budgetBytes: number;
  /** Picks the head/tail weighting (see `toolKind`). */
  toolName: string;
  /** Where the full text is (a path for the local store). */
  locator: string;
  /** Shown in the notice; default: the digested text's own size. */
  totalBytes?: number;
  totalLines?: number;
  /** How to read more; default: read with offset/limit or grep. */
  retrievalHint?: string;
  /** Overrides the weighting chosen from `toolName`. */
  kind?: ToolKind;
  /** Lines of the full file that come before this text (JSON sections). */
  lineOffset?: number;
  /** Names the part being digested (a JSON path such as `$.stdout`). */
  label?: string;
  /** Keep failure-looking lines from the elided middle (default true). */
  salience?: boolean;
}

/** Largest share of the digest that failure lines may take. */
const SALIENCE_SHARE = 1 / 4;
/** A failure line is shown up to this many bytes. */
const SALIENT_LINE_MAX = 240;
/** Only the first bytes of a line are matched (a 50 MB line is not a log line). */
const MATCH_WINDOW = 4096;
/** Size of the ring that keeps the latest candidates once SHAPES_KEPT shapes are known. */
const CANDIDATES_KEPT = 16;
const SALIENT_HEADER = '[spillway: failure-like lines from the elided part]\n';
const READ_CHUNK = 1 << 20;

/**
 * The planner asks for bytes through these requests, so one generator serves
 * a Buffer (answered synchronously) and an open file (answered with reads).
 */
type Request =
  | { op: 'read'; start: number; end: number }
  | { op: 'scan'; start: number; end: number; scanner: LineScanner }
  | { op: 'count'; start: number; end: number };
type Answer = Buffer | number | undefined;

interface Candidate {
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
const FAILURE_STEM = new RegExp(`${literalTrie(FAILURE_STEMS)}|\\be:|\\bsh:|go:\\d`, 'gi');

/**
 * Lower-case literals as one regex source in which those sharing a start share it (`c(?:annot|ould)`): the
 * regex then tries one branch per position, not each word. A flat alternation of the stems above scanned at
 * half the speed (112 ms against 70 ms on 28 MB).
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
class LineScanner {
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

interface Cut {
  headEnd: number;
  tailStart: number;
}

function split(avail: number, weight: number): { head: number; tail: number } {
  const head = Math.floor(avail * weight);
  return { head, tail: Math.max(0, avail - head) };
}

/**
 * Head end within the first `limit` bytes: after the last newline when that
 * keeps at least half the window, else at a character boundary (one long line).
 */
function cutHead(headBuf: Buffer, limit: number): number {
  if (limit <= 0) return 0;
  const nl = headBuf.lastIndexOf(0x0a, limit - 1);
  if (nl >= 0 && nl + 1 >= limit / 2) return nl + 1;
  return utf8FloorBoundary(headBuf, limit);
}

/** Tail start (file offset) for the last `limit` bytes; mirror of cutHead. */
function cutTail(tailBuf: Buffer, tailBufStart: number, size: number, limit: number): number {
  if (limit <= 0) return size;
  const from = tailBuf.length - limit;
  const nl = tailBuf.indexOf(0x0a, from);
  if (nl >= 0 && nl < tailBuf.length - 1 && tailBuf.length - (nl + 1) >= limit / 2) return tailBufStart + nl + 1;
  return tailBufStart + utf8CeilBoundary(tailBuf, from);
}

function renderSalient(c: Candidate, max?: number): string {
  return renderLine(c.repeats > 1 ? `[line ${c.lineNo}, ${c.repeats} alike] ` : `[line ${c.lineNo}] `, c.text, max);
}

/** A verdict's next line (Candidate.next), numbered as the verdict is. */
function renderNext(c: Candidate): string {
  return c.next ? renderLine(`[line ${c.lineNo + 1}] `, c.next.text) : '';
}

/** What a cut line keeps before its failure word, and the least of its text it shows (bytes). */
const BEFORE_WORD = 8;
const CUT_TEXT_MIN = 32;
const ELLIPSIS_BYTES = 3;

/**
 * `prefix + text` and a newline in at most `max` bytes. A longer line is cut: from a little before its failure
 * word (past an error's long preamble: a progress meter it is glued to, a log line's time and thread) to where
 * the room ends; `…`s mark what is left out. Empty when the room is too small to show much of the failure.
 */
function renderLine(prefix: string, text: string, max = SALIENT_LINE_MAX): string {
  const full = prefix + text;
  if (utf8Bytes(full) + 1 <= max) return full + '\n';
  const room = max - utf8Bytes(prefix) - 1; // for the text and its ellipses
  const bytes = Buffer.from(text, 'utf8');
  FAILURE_STEM.lastIndex = 0;
  const word = utf8Bytes(text.slice(0, FAILURE_STEM.exec(text)?.index ?? 0));
  const from = word <= BEFORE_WORD + ELLIPSIS_BYTES ? 0 : utf8CeilBoundary(bytes, word - BEFORE_WORD);
  const end = utf8FloorBoundary(bytes, Math.min(bytes.length, from + room - ELLIPSIS_BYTES * (from > 0 ? 2 : 1)));
  if (end < bytes.length && end - from < CUT_TEXT_MIN) return '';
  return `${prefix}${from > 0 ? '…' : ''}${bytes.toString('utf8', from, end)}${end < bytes.length ? '…' : ''}\n`;
}

/**
 * Which failure lines to show: one per shape, verdicts before mere mentions
 * and passing tests' lines last (failureRank). Within a rank, lines whose
 * shape occurs once come first (a root cause is rarely repeated, progress
 * noise is), among them the first and the last (root cause, final verdict),
 * then the others in order; repeated shapes follow, rarest first. Shown in
 * line order. What budget is left then goes to the chosen verdicts' next
 * lines, in the same order: a location never displaces a failure line.
 */
function selectSalient(cands: Candidate[], budget: number): string {
  const headerBytes = utf8Bytes(SALIENT_HEADER);
  if (cands.length === 0 || budget <= headerBytes) return '';
  const seen = new Set<string>();
  const unique: Candidate[] = [];
  const repeated: Candidate[] = [];
  for (const c of cands) {
    if (seen.has(c.shape)) continue;
    seen.add(c.shape);
    (c.repeats > 1 ? repeated : unique).push(c);
  }
  // By rank (verdicts, mentions, passing tests' lines); within one, as said above.
  const order: Candidate[] = [];
  for (const rank of [0, 1, 2]) {
    const once = unique.filter((c) => c.rank === rank);
    const ends = once.length > 1 ? [once[0]!, once[once.length - 1]!, ...once.slice(1, -1)] : once;
    order.push(...ends, ...repeated.filter((c) => c.rank === rank).sort((a, b) => a.repeats - b.repeats || a.lineNo - b.lineNo));
  }
  let left = budget - headerBytes;
  // Each chosen line as it is shown (with its next line once that is chosen too).
  const shown = new Map<Candidate, string>();
  let skipped: Candidate | undefined;
  for (const c of order) {
    const text = renderSalient(c);
    const cost = utf8Bytes(text);
    if (cost <= left) {
      shown.set(c, text);
      left -= cost;
    } else skipped ??= c;
  }
  // What is left shows the first line that did not fit whole, cut, when that is enough to show its failure.
  const cut = skipped ? renderSalient(skipped, left) : '';
  if (skipped && cut) {
    shown.set(skipped, cut);
    left -= utf8Bytes(cut);
  }
  if (shown.size === 0) return '';
  const chosen = [...shown.keys()];
  const shownLines = new Set(chosen.map((c) => c.lineNo));
  for (const c of chosen) {
    const next = renderNext(c);
    const cost = utf8Bytes(next);
    if (next && cost <= left && !shownLines.has(c.lineNo + 1)) {
      shown.set(c, shown.get(c)! + next);
      left -= cost;
    }
  }
  chosen.sort((a, b) => a.lineNo - b.lineNo);
  return SALIENT_HEADER + chosen.map((c) => shown.get(c)!).join('');
}

interface NoticeFacts {
  totalBytes: number;
  totalLines: number;
  firstElidedLine: number;
  lastElidedLine: number;
  elidedBytes: number;
}

function renderNotice(opts: DigestOptions, f: NoticeFacts): string {
  const what = opts.label ? `${opts.label} is` : 'Output is';
  const lines =
    f.lastElidedLine > f.firstElidedLine
      ? `lines ${formatCount(f.firstElidedLine)}-${formatCount(f.lastElidedLine)}`
      : `line ${formatCount(f.firstElidedLine)}`;
  const hint = opts.retrievalHint ?? 'Read it with offset/limit, or grep it.';
  return (
    `[... spillway: ${what} ${formatCount(f.totalBytes)} bytes, ${formatCount(f.totalLines)} lines; ` +
    `${lines} (${formatCount(f.elidedBytes)} bytes) are not shown, the cut starts at line ${formatCount(f.firstElidedLine)}. ` +
    `Full text: ${opts.locator} — ${hint}]\n`
  );
}

/** Notice size with every number at its widest possible value. */
function noticeReserve(opts: DigestOptions, size: number): number {
  const maxLine = (opts.lineOffset ?? 0) + size + 1;
  const widest = renderNotice(opts, {
    totalBytes: Math.max(opts.totalBytes ?? 0, size),
    totalLines: Math.max(opts.totalLines ?? 0, maxLine),
    firstElidedLine: maxLine,
    lastElidedLine: maxLine,
    elidedBytes: size,
  });
  return utf8Bytes(widest) + 1; // + a newline closing a mid-line head
}

function* planDigest(size: number, opts: DigestOptions): Generator<Request, string, Answer> {
  const lineOffset = opts.lineOffset ?? 0;
  const weight = headWeight(opts.kind ?? toolKind(opts.toolName));
  const avail = Math.max(0, Math.floor(opts.budgetBytes) - noticeReserve(opts, size));
  const maxSalience = opts.salience === false ? 0 : Math.floor(avail * SALIENCE_SHARE);
  const full = split(avail, weight);
  const min = split(avail - maxSalience, weight);

  const headBuf = (yield { op: 'read', start: 0, end: full.head }) as Buffer;
  const tailBufStart = size - full.tail;
  const tailBuf = (yield { op: 'read', start: tailBufStart, end: size }) as Buffer;
  const cutFor = (b: { head: number; tail: number }): Cut => ({
    headEnd: cutHead(headBuf, b.head),
    tailStart: cutTail(tailBuf, tailBufStart, size, b.tail),
  });
  const widest = cutFor(min);
  const fullCut = cutFor(full);

  // One pass over the widest middle the digest can have: failure candidates
  // with their line numbers.
  const scanner = new LineScanner(widest.headEnd, lineOffset + countNewlines(headBuf, 0, widest.headEnd) + 1);
  if (maxSalience > 0) yield { op: 'scan', start: widest.headEnd, end: widest.tailStart, scanner };
  const candidates = scanner.candidates();
  // A verdict's next line that the tail shows is not shown twice.
  const inMiddle = (c: Cut) =>
    candidates.filter((x) => x.start >= c.headEnd && x.start < c.tailStart).map((x) => (x.next && x.next.start >= c.tailStart ? { ...x, next: undefined } : x));

  let cut = fullCut;
  let salient = '';
  const reserved = utf8Bytes(selectSalient(inMiddle(fullCut), maxSalience));
  if (reserved > 0) {
    cut = cutFor(split(avail - reserved, weight));
    salient = selectSalient(inMiddle(cut), reserved);
  }

  const headNewlines = countNewlines(headBuf, 0, cut.headEnd);
  const tailNewlines = countNewlines(tailBuf, cut.tailStart - tailBufStart, tailBuf.length);
  // The scan already counted the widest middle; without it, count the middle.
  const middleNewlines =
    maxSalience > 0
      ? scanner.newlines - countNewlines(headBuf, widest.headEnd, cut.headEnd) - countNewlines(tailBuf, cut.tailStart - tailBufStart, widest.tailStart - tailBufStart)
      : ((yield { op: 'count', start: cut.headEnd, end: cut.tailStart }) as number);
  const lastByte = tailBuf.length > 0 ? tailBuf[tailBuf.length - 1] : headBuf[headBuf.length - 1];
  const ownLines = lineCountFrom(headNewlines + middleNewlines + tailNewlines, size, lastByte === 0x0a);
  const firstElidedLine = lineOffset + headNewlines + 1;
  // A tail that starts right after a newline leaves that line wholly elided.
  const beforeTail =
    cut.tailStart > tailBufStart
      ? tailBuf[cut.tailStart - tailBufStart - 1]
      : ((yield { op: 'read', start: cut.tailStart - 1, end: cut.tailStart }) as Buffer)[0];
  const tailAtLineStart = beforeTail === 0x0a;
  const lastElidedLine = lineOffset + headNewlines + middleNewlines + (tailAtLineStart ? 0 : 1);

  // Bytes that are not UTF-8 (a binary capture) show as `?`, one byte each: the digest stays within its budget.
  const head = decodeWithin(headBuf.subarray(0, cut.headEnd));
  const tail = decodeWithin(tailBuf.subarray(cut.tailStart - tailBufStart));
  const notice = renderNotice(opts, {
    totalBytes: opts.totalBytes ?? size,
    totalLines: opts.totalLines ?? ownLines,
    firstElidedLine,
    lastElidedLine,
    elidedBytes: cut.tailStart - cut.headEnd,
  });
  const joint = head.length === 0 || head.endsWith('\n') ? '' : '\n';
  return head + joint + notice + salient + tail;
}

/**
 * Digest a text: unchanged when it fits `budgetBytes`, else head + notice +
 * (failure lines) + tail in at most `budgetBytes` UTF-8 bytes (a budget smaller
 * than the notice itself yields the notice alone).
 */
export function digestText(text: string, opts: DigestOptions): string {
  if (utf8Bytes(text) <= opts.budgetBytes) return text;
  const buf = Buffer.from(text, 'utf8');
  const plan = planDigest(buf.length, opts);
  let step = plan.next();
  while (!step.done) {
    const r = step.value;
    let answer: Answer;
    if (r.op === 'read') answer = buf.subarray(r.start, r.end);
    else if (r.op === 'count') answer = countNewlines(buf, r.start, r.end);
    else {
      r.scanner.feed(buf.subarray(r.start, r.end));
      r.scanner.finish();
    }
    step = plan.next(answer);
  }
  return step.value;
}

/** Same digest as `digestText` on the same bytes, built from a file of any size without loading it whole. */
export async function digestFile(filePath: string, opts: DigestOptions): Promise<string> {
  const handle = await fsp.open(filePath, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`not a regular file: ${filePath}`);
    if (st.size <= opts.budgetBytes) return decodeWithin(await handle.readFile());
    // `into`: the one buffer the middle is read through, chunk after chunk (the scan copies what it keeps). A
    // fresh 1 MiB buffer per chunk left 96 MB of them to the collector on a 96 MB output when it fell behind.
    const read = async (start: number, end: number, into?: Buffer): Promise<Buffer> => {
      const buf = into ? into.subarray(0, end - start) : Buffer.alloc(Math.max(0, end - start));
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await handle.read(buf, got, buf.length - got, start + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return buf.subarray(0, got);
    };
    const plan = planDigest(st.size, opts);
    const middle = Buffer.allocUnsafe(READ_CHUNK);
    let step = plan.next();
    while (!step.done) {
      const r = step.value;
      let answer: Answer;
      if (r.op === 'read') answer = await read(r.start, r.end);
      else {
        let newlines = 0;
        for (let at = r.start; at < r.end; at += READ_CHUNK) {
          const chunk = await read(at, Math.min(r.end, at + READ_CHUNK), middle);
          if (r.op === 'scan') r.scanner.feed(chunk);
          else newlines += countNewlines(chunk);
        }
        if (r.op === 'scan') r.scanner.finish();
        else answer = newlines;
      }
      step = plan.next(answer);
    }
    return step.value;
  } finally {
    await handle.close();
  }
}

/**
 * Digest a JSON-shaped result keeping its shape: string leaves share the
 * budget (water-filled, smallest first); each cut leaf becomes its own
 * head + notice + tail whose line numbers point into the blob written by
 * `renderValueBlob`. Strings go through `digestText`; values that are not
 * plain JSON text (binary, exotic objects) come back unchanged.
 */
export function digestValue(value: unknown, opts: DigestOptions): unknown {
  if (typeof value === 'string') return digestText(value, opts);
  const c = classifyOutput(value);
  if (c.kind !== 'value') return value;
  const plan = planValueDigest(c.leaves, opts.budgetBytes);
  if (plan.digested.length === 0 && plan.emptied.length === 0) return value;
  const { lineOffsets } = sectionLayout(plan);
  const shares = new Map(plan.digested.map((d) => [d.leaf.index, d.share]));
  const largest = plan.digested.length > 0 ? plan.digested.reduce((a, b) => (b.leaf.bytes > a.leaf.bytes ? b : a)).leaf : undefined;
  // Only a list's short items cut: the first emptied one (in document order) says so, the others leave their list.
  const firstEmptied = largest ? undefined : plan.emptied.reduce((a, b) => (b.index < a.index ? b : a));
  // Emptied leaves must be announced even when the leaf that carries the
  // announcement fits whole, so it is a line of its own inside that leaf's share.
  const emptiedBytes = plan.emptied.reduce((n, l) => n + l.bytes, 0);
  const emptiedLine = plan.emptied.length
    ? `\n[... spillway: ${plan.emptied.length} more string fields (${formatCount(emptiedBytes)} bytes) are not shown here (emptied, or left out of their list); ` +
      `the full value, their text included, is in ${opts.locator} — ${opts.retrievalHint ?? 'Read it with offset/limit, or grep it.'}]\n`
    : '';
  const { totalBytes: _b, totalLines: _l, ...leafOpts } = opts;
  return replaceLeaves(value, [...plan.digested.map((d) => d.leaf), ...plan.emptied], (leaf) => {
    const share = shares.get(leaf.index);
    if (leaf === firstEmptied) return emptiedLine.trim();
    if (share === undefined) return firstEmptied && typeof leaf.path[leaf.path.length - 1] === 'number' ? DROP_ITEM : '';
    const extra = leaf === largest ? emptiedLine : '';
    return (
      digestText(leaf.value, {
        ...leafOpts,
        budgetBytes: share - utf8Bytes(extra),
        label: formatJsonPath(leaf.path),
        lineOffset: lineOffsets.get(leaf.index) ?? 0,
      }) + extra
    );
  });
}

/** Failure lines (line number, text, a verdict's indented next line) found by streaming `chunks`; exposed for tests and benchmarks. */
export function scanFailureLines(chunks: Buffer[], startLineNo = 1): { lineNo: number; text: string; repeats: number; next?: string }[] {
  const scanner = new LineScanner(0, startLineNo);
  for (const c of chunks) scanner.feed(c);
  scanner.finish();
  return scanner.candidates().map(({ lineNo, text, repeats, next }) => ({ lineNo, text, repeats, ...(next && { next: next.text }) }));
}
