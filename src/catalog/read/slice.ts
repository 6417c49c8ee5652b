// Line ranges of files of any size, read without loading the file. Each file
// gets a sparse line index (the byte offset of every 1024th line), filled as
// slices and counts read forward and reused by later slices of the same file.
import { promises as fsp } from 'node:fs';
import { openRegularFile } from '../../spill/regular-file';
import type { OpenForRead } from './rooted-read';
import type { SliceResult } from '../types';

export interface SliceOptions {
  /** Cut the returned text after this many bytes (default 16 MiB). */
  maxBytes?: number;
  /** How the file is opened (default: a regular file with one link, never through a symlink). */
  open?: OpenForRead;
}

/** Lines between index checkpoints. */
export const CHECKPOINT_LINES = 1024;
const CHUNK = 1 << 20;
const MAX_INDEXED_FILES = 64;

interface LineIndex {
  size: number;
  mtimeMs: number;
  /** checkpoints[k] = byte offset where line k*CHECKPOINT_LINES + 1 starts. */
  checkpoints: number[];
  total?: number;
}

const indexes = new Map<string, LineIndex>();

/** For tests and benchmarks: how many checkpoints a file's index holds. */
export function indexedCheckpoints(path: string): number {
  return indexes.get(path)?.checkpoints.length ?? 0;
}

async function indexFor(path: string, size: number, mtimeMs: number): Promise<LineIndex> {
  let index = indexes.get(path);
  if (!index || index.size !== size || index.mtimeMs !== mtimeMs) {
    index = { size, mtimeMs, checkpoints: [0] };
  }
  // Most recently used last; forget the oldest beyond the cap.
  indexes.delete(path);
  indexes.set(path, index);
  if (indexes.size > MAX_INDEXED_FILES) indexes.delete(indexes.keys().next().value!);
  return index;
}

/**
 * Walk lines from the checkpoint at or before `fromLine`; `visit` gets each
 * line's bytes from `fromLine` on (a line may arrive in several pieces) and
 * returns false to stop. Records checkpoints on the way.
 */
async function scanLines(
  path: string,
  fromLine: number,
  visit: ((line: number, piece: Buffer, ends: boolean) => boolean) | undefined,
  open: OpenForRead = openRegularFile,
): Promise<{ index: LineIndex; line: number; stopped: boolean; lastHadBytes: boolean }> {
  const handle = await open(path);
  try {
    const stat = await handle.stat();
    const index = await indexFor(path, stat.size, stat.mtimeMs);
    const k = Math.min(Math.floor((fromLine - 1) / CHECKPOINT_LINES), index.checkpoints.length - 1);
    let line = k * CHECKPOINT_LINES + 1;
    let pos = index.checkpoints[k]!;
    const buffer = Buffer.allocUnsafe(CHUNK);
    let lastHadBytes = false;
    while (pos < stat.size) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, stat.size - pos), pos);
      if (bytesRead === 0) break;
      let i = 0;
      while (i < bytesRead) {
        const nl = buffer.indexOf(0x0a, i);
        const end = nl === -1 || nl >= bytesRead ? bytesRead : nl;
        if (visit && line >= fromLine && !visit(line, buffer.subarray(i, end), end !== bytesRead)) {
          return { index, line, stopped: true, lastHadBytes: true };
        }
        if (end === bytesRead) {
          lastHadBytes = end > i || lastHadBytes;
          i = bytesRead;
          break;
        }
        lastHadBytes = false;
        line++;
        i = end + 1;
        if ((line - 1) % CHECKPOINT_LINES === 0) {
          const slot = (line - 1) / CHECKPOINT_LINES;
          if (slot === index.checkpoints.length) index.checkpoints.push(pos + i);
        }
      }
      pos += bytesRead;
    }
    return { index, line, stopped: false, lastHadBytes };
  } finally {
    await handle.close();
  }
}

/** Lines startLine..endLine (1-based, inclusive) of `path`. */
export async function readSlice(path: string, startLine: number, endLine: number, options: SliceOptions = {}): Promise<SliceResult> {
  const { data, ...rest } = await readSliceBytes(path, startLine, endLine, options);
  return { ...rest, text: data.toString('utf8') };
}

/**
 * readSlice's lines as the file's own bytes (joined by '\n'), for printing them unchanged; `newlineAfter`:
 * whether the file has a '\n' after the last of them (a last line may have none).
 */
export async function readSliceBytes(path: string, startLine: number, endLine: number, options: SliceOptions = {}): Promise<Omit<SliceResult, 'text'> & { data: Buffer; newlineAfter: boolean }> {
  if (!Number.isInteger(startLine) || !Number.isInteger(endLine) || startLine < 1 || endLine < startLine) {
    throw new RangeError(`invalid line range ${startLine}:${endLine} (1-based, start <= end)`);
  }
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  const lines: Buffer[][] = [];
  let bytes = 0;
  let truncated = false;
  let current: Buffer[] | undefined;
  let newlineAfter = false;
  const scan = await scanLines(path, startLine, (line, piece, ends) => {
    if (line > endLine) return false;
    newlineAfter = ends;
    if (!current) lines.push((current = []));
    if (bytes + piece.length > maxBytes) {
      current.push(Buffer.from(piece.subarray(0, maxBytes - bytes)));
      truncated = true;
      return false;
    }
    // Copy: the read buffer is reused for the next chunk.
    current.push(Buffer.from(piece));
    bytes += piece.length + 1;
    if (ends) current = undefined;
    return true;
  }, options.open);
  const newline = Buffer.from('\n');
  const data = Buffer.concat(lines.flatMap((parts, i) => (i === 0 ? parts : [newline, ...parts])));
  const returned = lines.length;
  const eof = !truncated && startLine + returned - 1 < endLine;
  return {
    path,
    startLine,
    endLine: startLine + returned - 1,
    data,
    newlineAfter: newlineAfter && !truncated,
    eof,
    ...(eof ? { lastLine: scan.lastHadBytes ? scan.line : scan.line - 1 } : {}),
    truncated,
  };
}

/** Number of lines ('\n'-terminated, plus a last unterminated one), cached by (size, mtime). */
export async function countLines(path: string, open?: OpenForRead): Promise<number> {
  // lstat: a symlink put in a counted file's place must not reuse its cached total.
  const stat = await fsp.lstat(path);
  const known = indexes.get(path);
  if (known && known.size === stat.size && known.mtimeMs === stat.mtimeMs && known.total !== undefined) return known.total;
  const last = known && known.size === stat.size && known.mtimeMs === stat.mtimeMs ? (known.checkpoints.length - 1) * CHECKPOINT_LINES + 1 : 1;
  const scan = await scanLines(path, last, undefined, open);
  const total = scan.lastHadBytes ? scan.line : scan.line - 1;
  scan.index.total = total;
  return total;
}
