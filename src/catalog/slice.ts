// Line ranges of files of any size, read without loading the file: a sparse
// line index (byte offset every N lines) per file, reused across slices.
import type { SliceResult } from './types';

export interface SliceOptions {
  /** Cut the returned text after this many bytes (default 16 MiB). */
  maxBytes?: number;
}

/** Lines startLine..endLine (1-based, inclusive) of `path`. */
export async function readSlice(path: string, startLine: number, endLine: number, options: SliceOptions = {}): Promise<SliceResult> {
  void path; void startLine; void endLine; void options;
  throw new Error('not implemented yet');
}

/** Number of lines ('\n'-terminated, plus a last unterminated one), cached by (size, mtime). */
export async function countLines(path: string): Promise<number> {
  void path;
  throw new Error('not implemented yet');
}
