// Drains the upload queue: each pending blob is copied to its content-addressed
// key (never over a copy already there, from a run killed after its upload),
// its manifest record put beside it, and only then is the queue entry removed.
// Several copies go up at once; a session's transcript goes after the blobs
// listed with it. One uploader at a time (queue-lock.ts); it takes what is
// queued while it runs too, so an entry whose own uploader found the lock held
// is not left for a later run. An error stops the drain and leaves the rest
// queued for the next run.
import { AbortMultipartUploadCommand, HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream, promises as fsp, constants as C } from 'node:fs';
import type { Readable } from 'node:stream';
import { LineIndexer, type LineIndex } from './line-index';
import { takeQueueLock } from './queue-lock';
import { blobKeys, parseS3Url, TITLE_METADATA, transcriptKey } from './s3-location';
import { describeS3Error } from './s3-client';
import { enqueueTranscript, ensureQueueDir, isTranscriptEntry, pendingNames, readPending, removePending, type PendingUpload } from './upload-queue';

/** Multipart above this (S3's minimum part is 5 MiB); parts in flight at once: memory stays under 4 x 8 MiB. */
export const PART_BYTES = 8 << 20;
export const PARTS_IN_FLIGHT = 4;
/** Queue entries copied at once: small blobs are round trips, not bandwidth. A big one holds PARTS_IN_FLIGHT parts. */
export const COPIES_IN_FLIGHT = 8;

type Outcome = 'uploaded' | 'present' | 'dropped';
/** An entry copied, and for a transcript the bytes its copy in the store holds now (undefined: dropped). */
type Copied = { outcome: Outcome; storedBytes?: number };
/** A blob sent or found there, and its line index for the record. */
type Sent = { outcome: 'uploaded' | 'present'; index: LineIndex };

export interface DrainResult {
  uploaded: number;
  /** Already in the bucket (an earlier run's upload): not sent again. */
  present: number;
  /** Local blob gone (cleaned before its upload): nothing left to copy. */
  dropped: number;
  /** Still queued. */
  pending: number;
  /** Why the drain stopped, when it did. */
  error?: string;
  /** Another uploader held the queue. */
  busy?: boolean;
}

export async function drainUploads(dir: string, client: S3Client): Promise<DrainResult> {
  const result: DrainResult = { uploaded: 0, present: 0, dropped: 0, pending: 0 };
  ensureQueueDir(dir);
  /** Entries this run took up and left (unreadable, or not copied): not taken up again. */
  const tried = new Set<string>();
  let took = false;
  for (;;) {
    const release = await takeQueueLock(dir);
    if (!release) {
      result.busy = !took;
      break;
    }
    took = true;
    try {
      await drainListed(dir, client, result, tried);
    } finally {
      await release();
    }
    // An entry queued after the last listing, whose own uploader found the lock held, is still this run's.
    if (result.error || !(await pendingNames(dir)).some((n) => !tried.has(n))) break;
  }
  result.pending = (await pendingNames(dir)).length;
  return result;
}

/** Copies what the queue lists, listing again until nothing new is there: blobs first, then transcripts. */
async function drainListed(dir: string, client: S3Client, result: DrainResult, tried: Set<string>): Promise<void> {
  for (;;) {
    const names = (await pendingNames(dir)).filter((n) => !tried.has(n));
    if (names.length === 0) return;
    // Two entries of one content (the same output spilled twice) go one after the other: once the first's copy is
    // there, the second sends nothing.
    const sameKey = new Map<string, Promise<Copied>>();
    for (const batch of [names.filter((n) => !isTranscriptEntry(n)), names.filter(isTranscriptEntry)]) {
      await inParallel(batch, COPIES_IN_FLIGHT, async (name) => {
        tried.add(name);
        const item = await readPending(dir, name);
        if (!item) return true;
        const key = JSON.stringify([item.store, item.agent, item.sessionId, item.kind ?? item.sha256]);
        const before = sameKey.get(key)?.catch(() => undefined);
        const copy = before ? before.then((b) => (b && b.outcome !== 'dropped' ? { ...b, outcome: 'present' as const } : copyOne(client, item))) : copyOne(client, item);
        sameKey.set(key, copy);
        let copied: Copied;
        try {
          copied = await copy;
          result[copied.outcome]++;
        } catch (err) {
          result.error ??= describeS3Error(err, `uploading ${item.file} to ${item.store}`);
          return false;
        }
        await removePending(dir, name);
        // Best effort: the agent's next hook queues the transcript again anyway.
        if (item.kind === 'transcript' && copied.storedBytes !== undefined) await requeueIfGrown(dir, item, copied.storedBytes).catch(() => undefined);
        // Done: a transcript entry of this name queued again later is a new request (it grew since).
        tried.delete(name);
        return true;
      });
      if (result.error) return;
    }
  }
}

/** Runs `work` over `items`, `limit` at a time; once one returns false no new item is started. */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<boolean>): Promise<void> {
  let next = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped && next < items.length) if (!(await work(items[next++]!))) stopped = true;
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function copyOne(client: S3Client, item: PendingUpload): Promise<Copied> {
  if (item.kind === 'transcript') return copyTranscript(client, item);
  const loc = parseS3Url(item.store);
  const keys = blobKeys(loc, item.agent, item.sessionId, item.sha256);
  const st = await fsp.stat(item.file).catch(() => undefined);
  let sent: Sent;
  if (!st || st.size !== item.bytes) {
    // The local blob is gone or not what was queued: only a copy already there can still be recorded.
    if ((await sizeAt(client, loc.bucket, keys.blob)) !== item.bytes) return { outcome: 'dropped' };
    sent = { outcome: 'present', index: new LineIndexer().index };
  } else if (item.bytes <= PART_BYTES) {
    sent = await putSmall(client, loc.bucket, keys.blob, item);
  } else {
    sent = await streamBig(client, loc.bucket, keys.blob, item);
    await abortLeftovers(client, loc.bucket, keys.blob);
  }
  const record = { ...item.record, agent: item.agent, lineIndex: sent.index };
  await client.send(new PutObjectCommand({ Bucket: loc.bucket, Key: keys.record, Body: JSON.stringify(record) + '\n', ContentType: 'application/json' }));
  return { outcome: sent.outcome };
}

const BLOB_TYPE = 'text/plain; charset=utf-8';

/**
 * A blob of one part, read whole (at most PART_BYTES) and sent in one request that the store refuses (412) where a
 * copy of this content is already there: a HeadObject first would double the round trips of small blobs.
 */
async function putSmall(client: S3Client, bucket: string, key: string, item: PendingUpload): Promise<Sent> {
  const body = Buffer.alloc(item.bytes);
  const handle = await fsp.open(item.file, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    for (let at = 0; at < body.length; ) {
      const { bytesRead } = await handle.read(body, at, body.length - at, at);
      if (bytesRead === 0) throw new Error(`${item.file} is shorter than the ${item.bytes} bytes queued`);
      at += bytesRead;
    }
  } finally {
    await handle.close();
  }
  const indexer = new LineIndexer();
  indexer.add(body);
  try {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: BLOB_TYPE, IfNoneMatch: '*' }));
    return { outcome: 'uploaded', index: indexer.index };
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 412) return { outcome: 'present', index: indexer.index };
    throw err;
  }
}

/**
 * A blob of several parts: HeadObject first (a copy already there, from a run killed after its upload, is not sent
 * again), else streamed up with its line index built on the way (lib-storage holds PARTS_IN_FLIGHT parts at most).
 */
async function streamBig(client: S3Client, bucket: string, key: string, item: PendingUpload): Promise<Sent> {
  const present = (await sizeAt(client, bucket, key)) === item.bytes;
  const indexer = new LineIndexer();
  const handle = await fsp.open(item.file, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    const indexed = createReadStream('', { fd: handle.fd, autoClose: false, start: 0, end: item.bytes - 1 }).pipe(indexer);
    if (present) for await (const _ of indexed);
    else await streamUp(client, bucket, key, indexed, item.bytes, BLOB_TYPE);
  } finally {
    await handle.close();
  }
  return { outcome: present ? 'present' : 'uploaded', index: indexer.index };
}

/**
 * A session's transcript, as it is now, over its previous copy (the latest wins). A transcript only grows, so a
 * copy of the same size is this one: not sent again.
 */
async function copyTranscript(client: S3Client, item: PendingUpload): Promise<Copied> {
  const loc = parseS3Url(item.store);
  const key = transcriptKey(loc, item.agent, item.sessionId);
  let handle;
  try {
    handle = await fsp.open(item.file, C.O_RDONLY | C.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return { outcome: 'dropped' };
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return { outcome: 'dropped' };
    if ((await sizeAt(client, loc.bucket, key)) === st.size) return { outcome: 'present', storedBytes: st.size };
    // Only the bytes there now: lines the agent appends meanwhile go up with the next entry.
    const body = st.size > 0 ? createReadStream('', { fd: handle.fd, autoClose: false, start: 0, end: st.size - 1 }) : '';
    await streamUp(client, loc.bucket, key, body, st.size, 'application/x-ndjson', item.title);
    return { outcome: 'uploaded', storedBytes: st.size };
  } finally {
    await handle.close();
  }
}

/**
 * An agent that queued its transcript again while the copy went up found the entry still there and left it: a file
 * grown past the copy (`storedBytes`, what the copy just made or found holds) is queued anew. Checked after the
 * entry's removal, so no growth slips in between.
 */
async function requeueIfGrown(dir: string, item: PendingUpload, storedBytes: number): Promise<void> {
  const st = await fsp.stat(item.file).catch(() => undefined);
  if (!st?.isFile() || st.size === storedBytes) return;
  enqueueTranscript(dir, { store: item.store, file: item.file, agent: item.agent, sessionId: item.sessionId, title: item.title });
}

/** One object from a stream, in parts above PART_BYTES (lib-storage holds PARTS_IN_FLIGHT of them, never the whole). */
async function streamUp(client: S3Client, bucket: string, key: string, body: Readable | string, bytes: number, type: string, title?: string): Promise<void> {
  const params = { Bucket: bucket, Key: key, Body: body, ContentLength: bytes, ContentType: type, ...(title !== undefined && { Metadata: { [TITLE_METADATA]: encodeURIComponent(title) } }) };
  await new Upload({ client, params, partSize: PART_BYTES, queueSize: PARTS_IN_FLIGHT, leavePartsOnError: false }).done();
}

/**
 * The parts a run killed mid-upload left of this key: the copy is whole now, so they are only cost. Best effort (a
 * policy may not allow listing them); a lifecycle rule that aborts incomplete uploads is the backstop (docs/store.md).
 */
async function abortLeftovers(client: S3Client, bucket: string, key: string): Promise<void> {
  try {
    const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
    for (const u of listed.Uploads ?? []) {
      if (u.Key === key && u.UploadId) await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: u.UploadId }));
    }
  } catch {
    // Left to the bucket's lifecycle rule.
  }
}

/** The object's size, or undefined when there is none. */
async function sizeAt(client: S3Client, bucket: string, key: string): Promise<number | undefined> {
  try {
    return (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength;
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404) return undefined;
    throw err;
  }
}
