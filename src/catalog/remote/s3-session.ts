// One session of a remote root read as the catalog reads a folder's: its blobs
// described from their manifest records and, through the agent's source
// (Source.remote), attributed to tool calls by the transcript's copy
// (PREFIX/AGENT/SESSION/transcript.jsonl), streamed and parsed as it arrives.
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import type { ManifestRecord } from '../../spill/manifest';
import { keySegment, recordKeyFor, s3Url, TITLE_METADATA, TRANSCRIPT_NAME, type S3Location } from '../../spill/remote/s3-location';
import { isoTime } from '../../spill/iso-time';
import { recordedBlob } from '../sources/common';
import { SOURCES } from '../sources/index';
import type { RemoteReading } from '../sources/source';
import type { ApiCall } from '../transcripts/calls';
import { readTranscriptStream } from '../transcripts/transcript-stream';
import type { BlobInfo, SessionInfo, SourceName } from '../types';
import { listObjects } from './s3-listing';

/** Records fetched at once. */
const RECORDS_PARALLEL = 8;

export interface RemoteSessionRef {
  agent: string;
  id: string;
}

export interface RemoteSessionRead {
  session: SessionInfo;
  /** The main-chain API calls of the transcript's copy (none when it did not travel). */
  calls: ApiCall[];
}

/** Where a session's keys are: `PREFIX/AGENT/SESSION/`. */
export function sessionPrefix(loc: S3Location, ref: RemoteSessionRef): string {
  return `${loc.prefix}${keySegment(ref.agent)}/${keySegment(ref.id)}/`;
}

/** The sessions named `id` under the root, one per agent that has it (each agent's folder listed once). */
export async function findRemoteSessions(client: S3Client, loc: S3Location, id: string): Promise<RemoteSessionRef[]> {
  const found: RemoteSessionRef[] = [];
  for await (const agent of childFolders(client, loc.bucket, loc.prefix)) {
    const within = `${loc.prefix}${agent}/${keySegment(id)}/`;
    const page = await client.send(new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: within, MaxKeys: 1 }));
    if ((page.KeyCount ?? page.Contents?.length ?? 0) > 0) found.push({ agent, id });
  }
  return found;
}

async function* childFolders(client: S3Client, bucket: string, prefix: string): AsyncGenerator<string> {
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: '/', ContinuationToken: token }));
    for (const p of page.CommonPrefixes ?? []) if (p.Prefix) yield p.Prefix.slice(prefix.length, -1);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

export interface RemoteSessionOptions {
  /** Read the transcript's copy (for attribution and turns); without it blobs are described from their records only. */
  transcript?: boolean;
}

export async function readRemoteSession(client: S3Client, loc: S3Location, ref: RemoteSessionRef, options: RemoteSessionOptions = {}): Promise<RemoteSessionRead | undefined> {
  const within = sessionPrefix(loc, ref);
  const blobs: Array<{ key: string; bytes: number; mtimeMs: number }> = [];
  let transcriptKey: string | undefined;
  let newest = 0;
  for await (const o of listObjects(client, { bucket: loc.bucket, prefix: within })) {
    const name = o.key.slice(within.length);
    if (name === TRANSCRIPT_NAME) transcriptKey = o.key;
    else if (!name.includes('/') && name.endsWith('.txt')) blobs.push(o);
    else continue;
    newest = Math.max(newest, o.mtimeMs);
  }
  if (blobs.length === 0 && !transcriptKey) return undefined;
  const source = SOURCES.find((s) => s.name === ref.agent);
  const reading = source?.remote;
  let skipped = 0;
  const notes: string[] = [];
  let state: unknown;
  let storedTitle: string | undefined;
  if (options.transcript && reading) {
    if (transcriptKey) {
      const got = await client.send(new GetObjectCommand({ Bucket: loc.bucket, Key: transcriptKey }));
      storedTitle = decodedTitle(got.Metadata?.[TITLE_METADATA]);
      const read = await readTranscriptStream(got.Body as Readable, reading.reducer);
      state = read.state;
      skipped += read.skipped;
    } else notes.push('transcript missing');
  }
  const records = await readRecords(client, loc.bucket, blobs.map((b) => b.key));
  const sessionKey = `${source?.name ?? 'spillway'}:${s3Url(loc, within.slice(0, -1))}`;
  const infos: BlobInfo[] = blobs.map((b, i) => {
    const record = records[i];
    if (record === null) skipped++;
    const url = s3Url(loc, b.key);
    const file = { path: url, name: record?.file ? path.posix.basename(record.file) : path.posix.basename(b.key) };
    const stat = { size: b.bytes, mtimeMs: b.mtimeMs };
    const described = reading ? reading.blob(file, stat, record ?? undefined, state) : recordedBlob(file, stat, record ?? undefined);
    return { ...described, key: url, sessionKey };
  });
  const facts = reading && state !== undefined ? reading.session(state) : undefined;
  return {
    session: {
      key: sessionKey,
      source: (source?.name ?? 'spillway') as SourceName,
      id: facts?.id ?? ref.id,
      ...(facts?.title || storedTitle ? { title: facts?.title || storedTitle } : {}),
      ...(facts?.cwd ? { cwd: facts.cwd } : {}),
      dir: s3Url(loc, within),
      ...(transcriptKey ? { transcript: s3Url(loc, transcriptKey) } : {}),
      root: s3Url(loc),
      bytes: infos.reduce((n, b) => n + b.bytes, 0),
      updatedAt: isoTime(newest),
      blobs: infos,
      skipped,
      notes,
    },
    calls: facts?.calls ?? [],
  };
}

/** The title stored with a transcript's copy; undefined when there is none or it is not URI-encoded. */
function decodedTitle(stored: string | undefined): string | undefined {
  try {
    return stored === undefined ? undefined : decodeURIComponent(stored) || undefined;
  } catch {
    return undefined;
  }
}

/** Each blob's record, in order: undefined when it has none, null when it is not a record (counted as skipped). */
export async function readRecords(client: S3Client, bucket: string, blobKeys: readonly string[]): Promise<Array<ManifestRecord | null | undefined>> {
  const out: Array<ManifestRecord | null | undefined> = new Array(blobKeys.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < blobKeys.length) {
      const i = next++;
      out[i] = await readRecord(client, bucket, recordKeyFor(blobKeys[i]!));
    }
  };
  await Promise.all(Array.from({ length: Math.min(RECORDS_PARALLEL, blobKeys.length) }, worker));
  return out;
}

async function readRecord(client: S3Client, bucket: string, key: string): Promise<ManifestRecord | null | undefined> {
  let text: string;
  try {
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    text = await got.Body!.transformToString();
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) return undefined;
    throw err;
  }
  try {
    const value = JSON.parse(text) as Partial<ManifestRecord> | null;
    return value && typeof value === 'object' && typeof value.tool === 'string' ? (value as ManifestRecord) : null;
  } catch {
    return null;
  }
}
