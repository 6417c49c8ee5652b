// The bounded text the model sees instead of a spilled result: head + notice +
// tail cut at line boundaries, the notice's size reserved inside the budget,
// and failure-looking lines from the elided middle kept when they fit.
//
// One planner serves text in memory and files of any size: it only ever needs
// the first and last few KB plus one streaming pass over the middle, so
// `digestFile` gives exactly what `digestText` gives on the same bytes.

import { constants as C, promises as fsp } from 'node:fs';
import { headWeight, toolKind, type ToolKind } from './salience';
import { formatCount } from '../common/format-count';
import { countNewlines, decodeWithin, lineCountFrom, utf8Bytes, utf8CeilBoundary, utf8FloorBoundary } from './text';
import { DROP_ITEM, classifyOutput, formatJsonPath, planValueDigest, replaceLeaves, sectionLayout } from './value';

import { LineScanner } from './line-scanner';
import { SALIENCE_SHARE, selectSalient } from './salient-lines';

export { isFailureLine, isReadLikeTool, toolKind, type ToolKind } from './salience';

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
  /** No full text exists (the output could not be kept): the notice says this instead of naming `locator`. */
  notKept?: string;
}

const READ_CHUNK = 1 << 20;

/**
 * The planner asks for bytes through these requests, so one generator serves
 * a Buffer (answered synchronously) and an open file (answered with reads).
 */
export type Request =
  | { op: 'read'; start: number; end: number }
  /** Answered with a LineScanner started at `start` (line `lineNo`) that has been fed up to `end` and finished. */
  | { op: 'scan'; start: number; end: number; lineNo: number }
  | { op: 'count'; start: number; end: number };
export type Answer = Buffer | number | LineScanner | undefined;

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
  const where = opts.notKept !== undefined ? opts.notKept : `Full text: ${opts.locator} — ${hint}`;
  return (
    `[... spillway: ${what} ${formatCount(f.totalBytes)} bytes, ${formatCount(f.totalLines)} lines; ` +
    `${lines} (${formatCount(f.elidedBytes)} bytes) are not shown, the cut starts at line ${formatCount(f.firstElidedLine)}. ` +
    `${where}]\n`
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

/** How much head and tail a digest keeps (widest and narrowest) and how much goes to failure lines. */
export interface DigestWindows {
  avail: number;
  weight: number;
  maxSalience: number;
  full: { head: number; tail: number };
  min: { head: number; tail: number };
}

/** `reserveSize`: the size the notice's numbers are reserved for (a stream's size is known only at its end). */
export function digestWindows(opts: DigestOptions, reserveSize: number): DigestWindows {
  const weight = headWeight(opts.kind ?? toolKind(opts.toolName));
  const avail = Math.max(0, Math.floor(opts.budgetBytes) - noticeReserve(opts, reserveSize));
  const maxSalience = opts.salience === false ? 0 : Math.floor(avail * SALIENCE_SHARE);
  return { avail, weight, maxSalience, full: split(avail, weight), min: split(avail - maxSalience, weight) };
}

/** Where the scan for failure lines starts (byte and line number), given the first `full.head` bytes. */
export function scanStart(headBuf: Buffer, w: DigestWindows, opts: DigestOptions): { start: number; lineNo: number } {
  const start = cutHead(headBuf, w.min.head);
  return { start, lineNo: (opts.lineOffset ?? 0) + countNewlines(headBuf, 0, start) + 1 };
}

/** The largest size a stream's notice is reserved for. */
export const STREAM_RESERVE_SIZE = Number.MAX_SAFE_INTEGER;

export function* planDigest(size: number, opts: DigestOptions, reserveSize: number = size): Generator<Request, string, Answer> {
  const lineOffset = opts.lineOffset ?? 0;
  const { avail, weight, maxSalience, full, min } = digestWindows(opts, reserveSize);

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
  const from = scanStart(headBuf, { avail, weight, maxSalience, full, min }, opts);
  const scanner =
    maxSalience > 0 ? ((yield { op: 'scan', start: from.start, end: widest.tailStart, lineNo: from.lineNo }) as LineScanner) : new LineScanner(from.start, from.lineNo);
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
export function digestText(text: string, opts: DigestOptions, reserveSize?: number): string {
  if (utf8Bytes(text) <= opts.budgetBytes) return text;
  const buf = Buffer.from(text, 'utf8');
  const plan = planDigest(buf.length, opts, reserveSize ?? buf.length);
  let step = plan.next();
  while (!step.done) {
    const r = step.value;
    let answer: Answer;
    if (r.op === 'read') answer = buf.subarray(r.start, r.end);
    else if (r.op === 'count') answer = countNewlines(buf, r.start, r.end);
    else {
      const scanner = new LineScanner(r.start, r.lineNo);
      scanner.feed(buf.subarray(r.start, r.end));
      scanner.finish();
      answer = scanner;
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
        const scanner = r.op === 'scan' ? new LineScanner(r.start, r.lineNo) : undefined;
        for (let at = r.start; at < r.end; at += READ_CHUNK) {
          const chunk = await read(at, Math.min(r.end, at + READ_CHUNK), middle);
          if (scanner) scanner.feed(chunk);
          else newlines += countNewlines(chunk);
        }
        scanner?.finish();
        answer = scanner ?? newlines;
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
