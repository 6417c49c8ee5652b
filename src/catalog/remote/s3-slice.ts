// Lines A..B of a remote blob by ranged GETs: from the record's line index
// (the indexed line at or before A), a window at a time, stopping at line B.
// A slice of a 1 GB blob reads about a megabyte plus the slice.
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { startFor, type LineIndex } from '../../spill/remote/line-index';
import { recordKeyFor, type S3Location } from '../../spill/remote/s3-location';

/** Bytes a ranged GET asks for at once. */
const WINDOW_BYTES = 1 << 20;

export interface RemoteSlice {
  /** The lines, each with its '\n' when the blob has one. */
  data: Buffer;
  /** The blob ended before line B; its last line's number. */
  endedAt?: number;
  /** Bytes read from the bucket. */
  bytesRead: number;
}

async function getRange(client: S3Client, bucket: string, key: string, from: number, to: number): Promise<Buffer> {
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${from}-${to}` }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

/** The blob's line index from its record, when the record is there and has one. */
export async function lineIndexOf(client: S3Client, bucket: string, blobKey: string): Promise<LineIndex | undefined> {
  try {
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: recordKeyFor(blobKey) }));
    const record = JSON.parse(await got.Body!.transformToString()) as { lineIndex?: unknown };
    return Array.isArray(record.lineIndex) ? (record.lineIndex as LineIndex) : undefined;
  } catch {
    return undefined;
  }
}

export async function readRemoteLines(client: S3Client, loc: S3Location, key: string, size: number, start: number, end: number): Promise<RemoteSlice> {
  const [fromLine, fromByte] = startFor(await lineIndexOf(client, loc.bucket, key), start);
  const out: Buffer[] = [];
  let line = fromLine;
  let at = fromByte;
  let bytesRead = 0;
  let carry = Buffer.alloc(0);
  while (at < size) {
    const window = await getRange(client, loc.bucket, key, at, Math.min(size, at + WINDOW_BYTES) - 1);
    bytesRead += window.length;
    at += window.length;
    const buf = carry.length ? Buffer.concat([carry, window]) : window;
    let from = 0;
    for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, from)) {
      if (line >= start) out.push(buf.subarray(from, nl + 1));
      line++;
      from = nl + 1;
      if (line > end) return { data: Buffer.concat(out), bytesRead };
    }
    carry = Buffer.from(buf.subarray(from));
  }
  // The last line, without a '\n'.
  if (carry.length > 0 && line >= start && line <= end) out.push(carry);
  const last = carry.length > 0 ? line : line - 1;
  return { data: Buffer.concat(out), bytesRead, ...(last < end ? { endedAt: last } : {}) };
}
