// The Node engine's search of one file, shared by the main thread and the
// worker that searches beside it (grep-ahead.ts): read 2 MB at a time into
// a buffer the lane reuses, find the literal in the bytes (or let the regex
// worker judge the lines that hold it), number the lines only where a match
// needs it.
import { isAscii } from 'node:buffer';
import { closeSync, readSync } from 'node:fs';
import type { Literal } from './literal';
import { countNewlines } from './newlines';
import type { ReadAnchor } from '../read/rooted-read';
import type { RegexRunner } from './regex-worker';
import type { GrepMatch } from '../types';

export const CHUNK = 2 << 20;
/** A "line" longer than this is cut (only binary-like files have them). */
const MAX_LINE_BYTES = 64 << 20;

/** Clip a line the same way for both engines. */
export function clipLine(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) + '…' : text;
}

/** Buffers reused from file to file by one lane of the Node engine. */
export interface Lane {
  /** Grows for a long line (until that file is done). */
  buffer: Buffer;
  /** Where the line counter re-reads a gap. */
  gap?: Buffer;
  pause: () => Promise<void> | undefined;
}

export interface Matcher {
  /** The literal (or a regex's required literal) as bytes, case-sensitive. */
  needle?: Literal;
  /** The same, lowered, for case-insensitive ASCII. */
  folded?: Literal;
  /** The pattern is a literal: where the bytes can be searched, they decide. */
  literalOnly: boolean;
  /** Judges lines by the regex (in a worker); unset when the byte search always decides. */
  runner?: RegexRunner;
  lineRegex: RegExp;
  maxLineChars: number;
}

/** Where one file's search reports to (the search in progress, or the worker's share of it). */
export interface FileSearchRun {
  /** Reports a match; false once the total cap is reached (a blob over its own cap is skipped, true). */
  emit: (m: GrepMatch) => boolean;
  /** The blob reached the per-blob cap: searching it further is wasted. */
  blobFull: (file: string) => boolean;
  /** Settles once the reader of the matches has caught up; undefined while it keeps up. */
  readerBehind: () => Promise<void> | undefined;
  /** The search was cancelled or ended: stop reading. */
  stopped: () => boolean;
  /** How files are reached. */
  reads: ReadAnchor;
}

/** Counts '\n' lazily: only when a match needs its line number. */
class LineCounter {
  private offset = 0;
  private line = 1;
  /** Set once a match needed a line number: later chunks are counted while in memory (no re-read). */
  eager = false;

  /** Count the rest of an in-memory chunk (called after it was searched). */
  advance(chunk: Buffer, chunkStart: number): void {
    if (!this.eager || this.offset < chunkStart) return;
    this.line += countNewlines(chunk, this.offset - chunkStart, chunk.length);
    this.offset = chunkStart + chunk.length;
  }
  constructor(
    private readonly fd: number,
    private readonly lane: Lane,
  ) {}

  /** Line number of the byte at `target`; `chunk` holds file bytes from `chunkStart`. */
  lineAt(target: number, chunk: Buffer, chunkStart: number): number {
    if (this.offset < chunkStart) {
      // The gap lies in chunks already searched without a match: re-read it (page cache).
      const buffer = (this.lane.gap ??= Buffer.allocUnsafe(CHUNK));
      while (this.offset < chunkStart) {
        const bytesRead = readSync(this.fd, buffer, 0, Math.min(CHUNK, chunkStart - this.offset), this.offset);
        if (bytesRead === 0) break;
        this.line += countNewlines(buffer, 0, bytesRead);
        this.offset += bytesRead;
      }
    }
    this.line += countNewlines(chunk, this.offset - chunkStart, target - chunkStart);
    this.offset = target;
    this.eager = true;
    return this.line;
  }
}

/** Search `file`, reporting to `run`; throws when it cannot be opened. */
export async function searchFile(file: string, matcher: Matcher, run: FileSearchRun, lane: Lane): Promise<void> {
  const { needle, folded, literalOnly, runner, lineRegex, maxLineChars } = matcher;
  const { fd, size } = run.reads.openSync(file);
  try {
    const counter = new LineCounter(fd, lane);
    const search: FileSearch = { file, counter, lineRegex, maxLineChars, run };
    // The lane's buffer: the unsearched tail of the previous read is moved to
    // its front and the next chunk read after it (no per-chunk allocation).
    let carry = 0;
    let regionStart = 0; // file offset of buffer[0]
    let pos = 0;
    for (;;) {
      await lane.pause();
      await run.readerBehind();
      if (run.stopped()) return;
      if (carry + CHUNK > lane.buffer.length) {
        const grown = Buffer.allocUnsafe(lane.buffer.length * 2);
        lane.buffer.copy(grown, 0, 0, carry);
        lane.buffer = grown;
      }
      const buffer = lane.buffer;
      let bytesRead = readSync(fd, buffer, carry, CHUNK, pos);
      // A UTF-8 byte-order mark is no text: ripgrep drops it before matching (`^ERROR` holds on line 1) and printing.
      if (pos === 0 && bytesRead >= 3 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf) {
        buffer.copyWithin(0, 3, bytesRead);
        bytesRead -= 3;
        pos = regionStart = 3;
      }
      // A NUL byte marks a binary file: searching stops as ripgrep's does on a folder, whose reads are
      // 64 KiB blocks: the lines that end before the block holding the NUL are searched, none after.
      const nul = buffer.subarray(carry, carry + bytesRead).indexOf(0);
      // Up to the size seen when opened (no read to find the end; an append since is not searched).
      const eof = bytesRead === 0 || pos + bytesRead >= size;
      pos += bytesRead;
      const length = nul === -1 ? carry + bytesRead : Math.max(0, binaryCutoff(regionStart + carry + nul) - regionStart);
      // Search only complete lines; the tail waits for the next chunk (or EOF).
      let end = eof && nul === -1 ? length : buffer.lastIndexOf(0x0a, length - 1) + 1;
      if (length === 0) end = 0;
      if (end === 0 && length > MAX_LINE_BYTES) end = length;
      if (end > 0) {
        const lines = buffer.subarray(0, end);
        const literal = needle ?? folded;
        // Case folding beyond ASCII (e.g. the Kelvin sign is a 'k'): only the regex can tell.
        const bytesTell = literal !== undefined && (needle !== undefined || isAscii(lines));
        let goOn = true;
        if (literalOnly && bytesTell) goOn = searchBytes(lines, regionStart, literal, search);
        else if (runner) {
          // Only lines holding the literal can match: the rest are never decoded or
          // sent. Near ones go as one stretch (a string per line costs more than the
          // lines between; where most lines hold it, the chunk goes nearly whole).
          const spans = bytesTell ? linesHolding(lines, literal, JOIN_WITHIN) : [0, end];
          if (spans.length > 0) goOn = await searchText(lines, spans, regionStart, runner, search);
        }
        if (!goOn) return;
        counter.advance(lines, regionStart);
      }
      if (eof || nul !== -1) return;
      buffer.copyWithin(0, end, length);
      carry = length - end;
      regionStart += end;
    }
  } finally {
    closeSync(fd);
    // A buffer grown for a long line is not kept for the files after it.
    if (lane.buffer.length > CHUNK * 2) lane.buffer = Buffer.allocUnsafe(CHUNK * 2);
  }
}

/** Where a search of a file with a NUL at `offset` stops: the start of ripgrep's 64 KiB read that holds it. */
function binaryCutoff(offset: number): number {
  return offset - (offset % (64 << 10));
}

/** One file being searched: where matches go and how their lines are numbered. */
interface FileSearch {
  file: string;
  counter: LineCounter;
  lineRegex: RegExp;
  maxLineChars: number;
  run: FileSearchRun;
}

/** Report one matching line; false when this file (or the whole search) is done. */
function report(search: FileSearch, lines: Buffer, base: number, byteStart: number, text: string): boolean {
  const { file, counter, maxLineChars, run } = search;
  const line = counter.lineAt(base + byteStart, lines, base);
  return run.emit({ path: file, line, text: clipLine(text, maxLineChars) }) && !run.blobFull(file);
}

/** How far past a regex's literal (in bytes) the lines sent to its worker reach. */
const JOIN_WITHIN = 16 << 10;

/**
 * The lines of `lines` where `literal` occurs: [start, end) byte ranges without
 * their '\n', flattened. With `joinWithin`, a range also takes the lines up to
 * that many bytes past its literal, and the next one found that close extends
 * it: lines between come along, and where the literal is on most lines the
 * search takes one step per `joinWithin` bytes rather than one per line.
 */
function linesHolding(lines: Buffer, literal: Literal, joinWithin = 0): number[] {
  const spans: number[] = [];
  let from = 0;
  for (;;) {
    const hit = literal.indexIn(lines, from);
    if (hit === -1) return spans;
    const start = hit === 0 ? 0 : lines.lastIndexOf(0x0a, hit - 1) + 1;
    let end = hit + joinWithin < lines.length ? lines.indexOf(0x0a, hit + joinWithin) : -1;
    if (end === -1) end = lines.length;
    if (joinWithin > 0 && spans.length > 0 && start - spans[spans.length - 1]! <= joinWithin) spans[spans.length - 1] = end;
    else spans.push(start, end);
    from = end + 1;
  }
}

/** Find a literal in `lines` and report the lines that hold it. */
function searchBytes(lines: Buffer, base: number, literal: Literal, search: FileSearch): boolean {
  const spans = linesHolding(lines, literal);
  for (let i = 0; i < spans.length; i += 2) {
    const text = lines.toString('utf8', spans[i], spans[i + 1]);
    // Bytes and decoded text agree for valid UTF-8; re-check so invalid bytes behave like rg's text view.
    if (search.lineRegex.test(text) && !report(search, lines, base, spans[i]!, text)) return false;
  }
  return true;
}

/**
 * Let the regex worker pick the matching lines among `spans` of `lines`
 * (ranges of whole lines, as linesHolding gives); report them in order.
 */
async function searchText(lines: Buffer, spans: number[], base: number, runner: RegexRunner, search: FileSearch): Promise<boolean> {
  const parts: string[] = [];
  for (let i = 0; i < spans.length; i += 2) parts.push(lines.toString('utf8', spans[i], spans[i + 1]));
  const text = parts.join('\n');
  const hits = await runner.find(text);
  // Walk the hits (in order) and the parts together: where a part starts in `text` and in `lines`, and
  // the line reached, by its start in both. Lines are counted by their '\n', which decoding keeps one for
  // one (text re-encoded would not give the bytes back: an invalid byte decodes to a 3-byte U+FFFD).
  let part = 0;
  let partStart = 0;
  let strPos = 0;
  let bytePos = spans[0]!;
  for (let i = 0; i < hits.length; i += 2) {
    const start = hits[i]!;
    while (part + 1 < parts.length && start >= partStart + parts[part]!.length + 1) {
      partStart += parts[part]!.length + 1;
      part++;
      strPos = partStart;
      bytePos = spans[part * 2]!;
    }
    for (let nl = text.indexOf('\n', strPos); nl !== -1 && nl < start; nl = text.indexOf('\n', strPos)) {
      bytePos = lines.indexOf(0x0a, bytePos) + 1;
      strPos = nl + 1;
    }
    if (!report(search, lines, base, bytePos, text.slice(start, hits[i + 1]!))) return false;
  }
  return true;
}
