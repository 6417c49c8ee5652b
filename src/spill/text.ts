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

/**
 * Whether a body that arrives in pieces is text: UTF-8 in its first TEXT_PROBE_BYTES, as an image or an
 * executable never is. A log with a stray Latin-1 byte further on is still text, and so is one with NUL
 * bytes (`find -print0`): NUL is UTF-8.
 */
export class TextCheck {
  private probe: Buffer[] = [];
  private probed = 0;
  private bytes = 0;

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.probed < TEXT_PROBE_BYTES) {
      const part = chunk.subarray(0, TEXT_PROBE_BYTES - this.probed);
      this.probe.push(Buffer.from(part));
      this.probed += part.length;
    }
  }

  /** The verdict, once the last piece came. */
  get isText(): boolean {
    return startsAsUtf8(Buffer.concat(this.probe), this.bytes);
  }
}

/** How much of a body must be UTF-8 for it to be text. */
const TEXT_PROBE_BYTES = 8192;

/** `bytes` (a whole body) as TextCheck judges it; a character cut at the end of the probe is allowed. */
export function looksLikeText(bytes: Buffer): boolean {
  return startsAsUtf8(bytes.subarray(0, TEXT_PROBE_BYTES), bytes.length);
}

/** Whether `probe`, the first bytes of a body of `total` bytes, is UTF-8 (a character it cuts off allowed). */
function startsAsUtf8(probe: Buffer, total: number): boolean {
  if (probe.length === total) return isUtf8(probe);
  const end = utf8FloorBoundary(probe, probe.length);
  return isUtf8(probe.subarray(0, end)) && (end === probe.length || startsACharacter(probe.subarray(end)));
}

/** Whether `bytes` (1-3 of them) can begin a well-formed character: some continuation completes them. */
function startsACharacter(bytes: Buffer): boolean {
  const lead = bytes[0]!;
  const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  if (length <= bytes.length) return false;
  // Only the second byte has a narrower range (E0, ED, F0, F4): one of these fills satisfies it when anything does.
  return [0x80, 0xa0].some((fill) => isUtf8(Buffer.concat([bytes, Buffer.alloc(length - bytes.length, fill)])));
}

/**
 * UTF-8 bytes as text, each byte that is no part of a well-formed character as `?`: never longer in UTF-8
 * than the bytes (U+FFFD takes three), so a digest cut to a byte budget stays within it.
 */
export function decodeWithin(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  let out = '';
  let from = 0;
  for (let i = 0; i < bytes.length; ) {
    const n = sequenceLength(bytes, i);
    if (n > 0) {
      i += n;
      continue;
    }
    out += bytes.toString('utf8', from, i) + '?';
    from = ++i;
  }
  return out + bytes.toString('utf8', from);
}

/** Length of the well-formed UTF-8 character at `i` (Unicode's table 3-7), or 0. */
function sequenceLength(b: Buffer, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const [lo, hi] = c === 0xe0 ? [0xa0, 0xbf] : c === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const [lo, hi] = c === 0xf0 ? [0x90, 0xbf] : c === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
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
