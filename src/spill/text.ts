// Byte and line facts about text, shared by the digest, the store and the policy
// so every place counts the same way.
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';

const NL = 0x0a;

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Number of newline bytes in buf[start, end). */
export function countNewlines(buf: Uint8Array, start = 0, end = buf.length): number {
  let n = 0;
  let i = start;
  while (i < end) {
    const j = buf.indexOf(NL, i);
    if (j < 0 || j >= end) break;
    n++;
    i = j + 1;
  }
  return n;
}

/**
 * Lines as an editor shows them: `a\nb` and `a\nb\n` both have 2 lines, the
 * empty text has 0. Derived from the newline count and whether the text ends
 * with one, so a file can be counted while streaming.
 */
export function lineCountFrom(newlines: number, bytes: number, endsWithNewline: boolean): number {
  if (bytes === 0) return 0;
  return endsWithNewline ? newlines : newlines + 1;
}

/** sha256, bytes and lines of a body that arrives in pieces (a file read, a pipe), counted as `countLines` does. */
export class ContentTally {
  private readonly hash = createHash('sha256');
  private newlines = 0;
  private last = -1;
  bytes = 0;

  add(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.newlines += countNewlines(chunk);
    if (chunk.length > 0) this.last = chunk[chunk.length - 1]!;
  }

  /** The facts; call once, after the last piece. */
  finish(): { sha256: string; bytes: number; lines: number } {
    return { sha256: this.hash.digest('hex'), bytes: this.bytes, lines: lineCountFrom(this.newlines, this.bytes, this.last === NL) };
  }
}

/** Whether a body that arrives in pieces is UTF-8, a character split between two pieces included. */
export class Utf8Check {
  private carry: Buffer = Buffer.alloc(0);
  private valid = true;

  add(chunk: Buffer): void {
    if (!this.valid) return;
    const whole = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const end = utf8FloorBoundary(whole, whole.length);
    this.valid = isUtf8(whole.subarray(0, end));
    this.carry = Buffer.from(whole.subarray(end));
  }

  /** The verdict, once the last piece came (a character cut off at the end is not UTF-8). */
  get isUtf8(): boolean {
    return this.valid && this.carry.length === 0;
  }
}

export function countLines(text: string | Buffer): number {
  const buf = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return lineCountFrom(countNewlines(buf), buf.length, buf.length > 0 && buf[buf.length - 1] === NL);
}

/**
 * Largest index <= i that does not fall inside a UTF-8 multi-byte sequence.
 * Looks only at bytes before i, so it is right even when `buf` ends at i.
 */
export function utf8FloorBoundary(buf: Uint8Array, i: number): number {
  const k = Math.max(0, Math.min(i, buf.length));
  let p = k - 1;
  while (p >= 0 && (buf[p]! & 0xc0) === 0x80 && k - p < 4) p--;
  if (p < 0) return 0;
  const lead = buf[p]!;
  const len = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return p + len <= k ? k : p;
}

/** Smallest index >= i that does not fall inside a UTF-8 multi-byte sequence. */
export function utf8CeilBoundary(buf: Uint8Array, i: number): number {
  let k = Math.max(0, Math.min(i, buf.length));
  while (k < buf.length && (buf[k]! & 0xc0) === 0x80) k++;
  return k;
}

/** Cut a string to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  return buf.subarray(0, utf8FloorBoundary(buf, Math.max(0, maxBytes))).toString('utf8');
}

/** 1234567 -> "1,234,567" (stable across locales). */
export function formatCount(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
