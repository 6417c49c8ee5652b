// Bounded head reads: a preview cut at a line boundary and a binary check,
// never reading more than a few KB of a blob.
import { openRegularFile } from '../../spill/regular-file';
import type { OpenForRead } from './rooted-read';

export const PREVIEW_BYTES = 2048;
const SNIFF_BYTES = 8192;

export interface HeadInfo {
  preview: string;
  binary: boolean;
}

/** Read at most 8 KB of `path` (opened by `open`: a regular file, else an error); the preview is at most `maxBytes`, cut at the last '\n' inside that budget. */
export async function readHead(path: string, maxBytes = PREVIEW_BYTES, open: OpenForRead = openRegularFile): Promise<HeadInfo> {
  const handle = await open(path);
  try {
    const buffer = Buffer.alloc(Math.max(SNIFF_BYTES, maxBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return describeHead(buffer.subarray(0, bytesRead), maxBytes);
  } finally {
    await handle.close();
  }
}

/** Pure part of readHead, for tests. */
export function describeHead(head: Buffer, maxBytes = PREVIEW_BYTES): HeadInfo {
  const binary = isBinary(head);
  if (binary) return { preview: '', binary };
  let end = Math.min(head.length, maxBytes);
  if (end < head.length) {
    const newline = head.lastIndexOf(0x0a, end - 1);
    end = newline > 0 ? newline : utf8Boundary(head, end);
  } else if (end > 0 && head[end - 1] === 0x0a) {
    end -= 1;
  }
  return { preview: head.subarray(0, end).toString('utf8'), binary };
}

/** A NUL byte, or bytes that are not UTF-8 (ignoring a sequence cut by the read limit). */
export function isBinary(head: Buffer): boolean {
  if (head.includes(0)) return true;
  const end = utf8Boundary(head, head.length);
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, end));
    return false;
  } catch {
    return true;
  }
}

/** Largest index <= end that does not split a UTF-8 sequence. */
export function utf8Boundary(buffer: Buffer, end: number): number {
  let i = end;
  // Step back over continuation bytes (10xxxxxx) to the lead byte, at most 3.
  while (i > 0 && end - i < 4 && ((buffer[i - 1] ?? 0) & 0xc0) === 0x80) i--;
  if (i === 0) return end;
  const lead = buffer[i - 1] ?? 0;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return end - (i - 1) >= need ? end : i - 1;
}
