// JSONL transcripts parsed streaming, cached by (size, mtime); a file that
// only grew is read from where the last read stopped, not from the start.
import { closeSync, lstatSync, readSync, type Stats } from 'node:fs';
import { openRegularFileSync, refusedKind } from '../../spill/regular-file';
import { stampFrom } from '../shared/stamp';
import { pauser } from '../shared/pause';
import type { SlimReader } from './slim-line';

/** Folds the JSON values of a transcript's lines into a state. */
export interface LineReducer<S> {
  /** Distinguishes reducers sharing one cache. */
  kind: string;
  init(): S;
  /** Returns false when the value was not understood (counted as skipped). */
  line(state: S, value: unknown): boolean;
  /**
   * Whether the line `bytes[start, end)` (no newline) may be passed over unparsed: it
   * provably carries nothing that would change `state` (counted as read). Asked of every
   * line: a range of the read buffer, not a Buffer made for each.
   */
  passOver?(state: S, bytes: Buffer, start: number, end: number): boolean;
  /** A field of long lines parsed only for the keys the reducer reads (see slim-line.ts). */
  slim?: SlimReader;
}

export interface TranscriptRead<S> {
  state: S;
  /** Lines that were not JSON or not understood, plus a torn last line. */
  skipped: number;
  /** Complete lines read so far. */
  lines: number;
  size: number;
  mtimeMs: number;
}

interface Entry {
  kind: string;
  /** The file read: another one at the same path (replaced by a rename) starts over. */
  ino: number;
  size: number;
  mtimeMs: number;
  /** Bytes consumed: the end of the last complete line. */
  offset: number;
  state: unknown;
  skipped: number;
  lines: number;
  torn: boolean;
}

/**
 * Longest line parsed; longer ones are skipped (counted) without being held:
 * V8 cannot make a string of a line over ~512 MB, and that error would drop
 * the whole session.
 */
export const MAX_LINE_BYTES = 128 * 1024 * 1024;
/** Shorter lines are parsed whole: cutting a field saves less than it costs to find it. */
const SLIM_FROM = 4096;
/** Read size (most transcripts are read in one). */
const CHUNK = 256 * 1024;

export class TranscriptCache {
  private readonly entries = new Map<string, Entry>();
  /** Each path's stamp as its last read() found it (the lstat before reading; read only up to that size). */
  private readonly stamps = new Map<string, string>();
  private readonly maxLineBytes: number;
  /** Shared by every read: each chunk is read into it and parsed between two awaits. */
  private readonly buffer = Buffer.allocUnsafe(CHUNK);
  /** Bytes read from disk, for tests that prove incremental reads. */
  bytesRead = 0;

  constructor(options: { maxLineBytes?: number } = {}) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
  }

  /** Parse (or continue parsing) `path`; undefined when it does not exist. */
  async read<S>(path: string, reducer: LineReducer<S>): Promise<TranscriptRead<S> | undefined> {
    let stat: Stats | undefined;
    try {
      // lstat: a symlink in a transcript's place is no transcript (it may lead anywhere).
      // Synchronous: one stat costs less than a promise around it.
      stat = lstatSync(path, { throwIfNoEntry: false });
      this.stamps.set(path, stampFrom(stat ?? null));
    } catch {
      stat = undefined;
      this.stamps.delete(path);
    }
    if (!stat) {
      this.entries.delete(path);
      return undefined;
    }
    // Not read (a symlink, a FIFO, a hard link), and counted as skipped: the session still shows what else it has.
    if (refusedKind(stat)) return { state: reducer.init(), skipped: 1, lines: 0, size: stat.size, mtimeMs: stat.mtimeMs };
    let entry = this.entries.get(path);
    if (entry && entry.kind === reducer.kind && entry.ino === stat.ino && entry.size === stat.size && entry.mtimeMs === stat.mtimeMs) {
      return result(entry);
    }
    // Reuse the parsed prefix only when the same file grew; a replaced file, or
    // one shorter than when last read (rewritten), starts over.
    if (!entry || entry.kind !== reducer.kind || entry.ino !== stat.ino || stat.size < Math.max(entry.size, entry.offset)) {
      entry = { kind: reducer.kind, ino: stat.ino, size: 0, mtimeMs: 0, offset: 0, state: reducer.init(), skipped: 0, lines: 0, torn: false };
    }
    await this.consume(path, entry, reducer as LineReducer<unknown>, stat.size);
    entry.size = stat.size;
    entry.mtimeMs = stat.mtimeMs;
    this.entries.set(path, entry);
    return result(entry);
  }

  forget(path: string): void {
    this.entries.delete(path);
    this.stamps.delete(path);
  }

  /**
   * The stamp `path` had when read() last looked at it, taken before it was read: what that read saw, since it
   * reads no further than the size it found (undefined when read() has not looked at it).
   */
  stampRead(path: string): string | undefined {
    return this.stamps.get(path);
  }

  /** Parse from entry.offset to `size` (as last seen; a later append is read next time). */
  private async consume(path: string, entry: Entry, reducer: LineReducer<unknown>, size: number): Promise<void> {
    // A line begun in an earlier chunk: its bytes there, counted, not copied (see below).
    let pendingBytes = 0;
    let offset = entry.offset;
    /** Parse the complete lines of `chunk`; false when the file no longer holds a line begun before it (then stop). */
    const feed = (fd: number, chunk: Buffer): boolean => {
      this.bytesRead += chunk.length;
      let start = 0;
      let nl = chunk.indexOf(0x0a, start);
      while (nl !== -1) {
        const lineBytes = pendingBytes + (nl - start);
        if (lineBytes > this.maxLineBytes) {
          entry.lines++;
          entry.skipped++;
        } else if (pendingBytes === 0) {
          // Straight from the chunk: no Buffer object per line.
          takeLine(entry, reducer, chunk, start, nl);
        } else {
          // A line across reads, gathered once its length is known: read again from where it
          // begins into a buffer of its size (chunks copied as they came, then joined, held it twice).
          const line = Buffer.allocUnsafe(lineBytes);
          for (let got = 0, n; got < pendingBytes; got += n) {
            n = readSync(fd, line, got, pendingBytes - got, offset + got);
            if (n === 0) return false; // cut short since: the line stays torn
          }
          chunk.copy(line, pendingBytes, start, nl);
          this.bytesRead += pendingBytes;
          takeLine(entry, reducer, line, 0, lineBytes);
        }
        offset += lineBytes + 1;
        pendingBytes = 0;
        start = nl + 1;
        nl = chunk.indexOf(0x0a, start);
      }
      pendingBytes += chunk.length - start;
      return true;
    };
    try {
      // Not through a symlink put there since the lstat, never blocked on a FIFO.
      const { fd } = openRegularFileSync(path);
      try {
        // Streamed a chunk at a time (a huge transcript is never held whole),
        // yielding to the event loop every few milliseconds (other reads may run
        // then: each chunk is parsed before the next await).
        const pause = pauser();
        for (let position = entry.offset; position < size; ) {
          const turn = pause();
          if (turn) await turn;
          const bytesRead = readSync(fd, this.buffer, 0, CHUNK, position);
          if (bytesRead === 0) break;
          position += bytesRead;
          if (!feed(fd, this.buffer.subarray(0, bytesRead))) break;
        }
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      // Vanished or replaced by something else mid-read: keep what was parsed.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTREG') throw err;
    }
    entry.offset = offset;
    // A last line without '\n' may still be being written: not consumed, counted as torn.
    entry.torn = pendingBytes > 0;
  }
}

/** A transcript's reading so far: the reducer's state and the lines counted. */
export interface LineTally<S> {
  state: S;
  lines: number;
  skipped: number;
}

/**
 * One complete line, `bytes[start, end)` without its newline, into the tally: passed over when the reducer
 * says it may be, else parsed (a long one slimmed) and reduced; not JSON, or not understood, counts as skipped.
 * Every reader of transcripts (files here, objects streamed from a bucket) takes its lines through this.
 */
export function takeLine<S>(tally: LineTally<S>, reducer: LineReducer<S>, bytes: Buffer, start: number, end: number): void {
  tally.lines++;
  if (reducer.passOver?.(tally.state, bytes, start, end)) return;
  const text = (end - start >= SLIM_FROM && reducer.slim?.text(bytes, start, end)) || bytes.toString('utf8', start, end);
  if (text.trim() === '') return;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    tally.skipped++;
    return;
  }
  // One line the reducer cannot take (e.g. nested too deep for its
  // recursion: a RangeError) costs that line, not the session.
  let understood = false;
  try {
    understood = reducer.line(tally.state, value);
  } catch {
    understood = false;
  }
  if (!understood) tally.skipped++;
}

function result<S>(entry: Entry): TranscriptRead<S> {
  return {
    state: entry.state as S,
    skipped: entry.skipped + (entry.torn ? 1 : 0),
    lines: entry.lines,
    size: entry.size,
    mtimeMs: entry.mtimeMs,
  };
}
