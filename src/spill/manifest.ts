// `spillway.jsonl`: one append-only record per spill, written beside the blobs.
// Readers tolerate a torn last line and unknown fields.
import { promises as fsp, constants as C } from 'node:fs';
import * as path from 'node:path';
import type { AnchoredDir } from './anchored-dir';
import { isIsoTime } from './iso-time';
import { openRegularFile } from './regular-file';

export const MANIFEST_NAME = 'spillway.jsonl';
export const MANIFEST_VERSION = 1;

export interface ManifestRecord {
  v: number;
  /** Blob path relative to the manifest's folder (normally a bare file name). */
  file: string;
  tool: string;
  toolCallId: string;
  args?: unknown;
  bytes: number;
  lines: number;
  sha256: string;
  /** ISO 8601. */
  createdAt: string;
  sessionId: string;
  turn?: number;
  /** Set when this record reuses an earlier identical blob (no second write). */
  aliasOf?: string;
}

export interface ManifestReadResult {
  records: ManifestRecord[];
  /** Lines that were not valid records (torn, malformed, wrong shape). */
  skipped: number;
}

/**
 * The manifest opened for appending, created 0600 if missing: never through
 * a symlink, never blocking on a FIFO (O_NONBLOCK: a FIFO without a reader
 * fails at once, one with a reader is refused by fstat), and refused when it
 * has other hard links (the records would land in a file elsewhere).
 * `dir` is a folder path or a folder already opened.
 */
export async function openManifestForAppend(dir: string | AnchoredDir): Promise<ManifestAppender> {
  const file = typeof dir === 'string' ? path.join(dir, MANIFEST_NAME) : dir.at(MANIFEST_NAME);
  const shown = typeof dir === 'string' ? file : path.join(dir.path, MANIFEST_NAME);
  // Read too: an append looks at the last byte first.
  const handle = await openRegularFile(file, { flags: C.O_RDWR | C.O_APPEND | C.O_CREAT, mode: 0o600, shown });
  return {
    // A single write(2) of one line on an O_APPEND descriptor lands whole for
    // the line sizes we produce: concurrent writers never interleave. A line
    // a failed write tore (a full disk, a killed writer) is ended first, so
    // this record does not join it and get lost with it.
    async append(record) {
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      const torn = size > 0 && (await handle.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== 0x0a;
      const line = Buffer.from(`${torn ? '\n' : ''}${JSON.stringify(record)}\n`, 'utf8');
      const { bytesWritten } = await handle.write(line, 0, line.length);
      if (bytesWritten < line.length) throw new Error(`the record was cut short (${bytesWritten} of ${line.length} bytes written)`);
    },
    close: () => handle.close(),
  };
}

export interface ManifestAppender {
  append(record: ManifestRecord): Promise<void>;
  close(): Promise<void>;
}

/** Append one record (open, append, close). */
export async function appendManifest(dir: string | AnchoredDir, record: ManifestRecord): Promise<void> {
  const manifest = await openManifestForAppend(dir);
  try {
    await manifest.append(record);
  } finally {
    await manifest.close();
  }
}

/** Parse manifest text; keeps the valid records, counts the rest. */
export function parseManifest(text: string): ManifestReadResult {
  const records: ManifestRecord[] = [];
  let skipped = 0;
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    const record = toRecord(raw);
    if (record) records.push(record);
    else skipped++;
  }
  return { records, skipped };
}

/**
 * The whole manifest. Never through a symlink, and never blocking on a FIFO
 * planted in its place (O_NONBLOCK opens it at once; it is then refused).
 */
export async function readManifest(dir: string): Promise<ManifestReadResult> {
  const handle = await openManifest(dir);
  if (!handle) return { records: [], skipped: 0 };
  try {
    return parseManifest(await handle.readFile('utf8'));
  } finally {
    await handle.close();
  }
}

/** The manifest opened for reading (a regular file, never through a symlink); undefined when there is none. */
async function openManifest(dir: string): Promise<fsp.FileHandle | undefined> {
  try {
    return await openRegularFile(path.join(dir, MANIFEST_NAME));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A turn number a record (or an index row made from one) may carry: 1, 2, ...; anything else is no known turn. */
export function isTurn(turn: unknown): turn is number {
  return Number.isSafeInteger(turn) && (turn as number) >= 1;
}

function toRecord(raw: string): ManifestRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (typeof r.file !== 'string' || typeof r.tool !== 'string' || typeof r.sessionId !== 'string') return undefined;
  return {
    v: typeof r.v === 'number' ? r.v : MANIFEST_VERSION,
    file: r.file,
    tool: r.tool,
    toolCallId: typeof r.toolCallId === 'string' ? r.toolCallId : '',
    args: r.args,
    bytes: typeof r.bytes === 'number' ? r.bytes : 0,
    lines: typeof r.lines === 'number' ? r.lines : 0,
    sha256: typeof r.sha256 === 'string' ? r.sha256 : '',
    // A time that is no date, a turn that is no turn number: left out (the blob's mtime, no turn), never shown as read.
    createdAt: typeof r.createdAt === 'string' && isIsoTime(r.createdAt) ? r.createdAt : '',
    sessionId: r.sessionId,
    ...(isTurn(r.turn) ? { turn: r.turn } : {}),
    ...(typeof r.aliasOf === 'string' ? { aliasOf: r.aliasOf } : {}),
  };
}

export interface ManifestTail extends ManifestReadResult {
  /** Offset just after the last complete line read; pass it back next time. */
  offset: number;
  /** Identity of the file read, so a caller can tell a replaced manifest. */
  ino: number;
}

/**
 * Records appended since `offset` (complete lines only; a line still being
 * written is left for the next call). A manifest shorter than `offset` was
 * replaced: it is read again from the start. Missing -> empty.
 */
export async function readManifestFrom(dir: string, offset: number): Promise<ManifestTail> {
  const handle = await openManifest(dir);
  if (!handle) return { records: [], skipped: 0, offset: 0, ino: 0 };
  try {
    const st = await handle.stat();
    const from = st.size < offset ? 0 : offset;
    const buf = Buffer.alloc(st.size - from);
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, from + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    const end = buf.subarray(0, got).lastIndexOf(0x0a) + 1;
    return { ...parseManifest(buf.subarray(0, end).toString('utf8')), offset: from + end, ino: st.ino };
  } finally {
    await handle.close();
  }
}
