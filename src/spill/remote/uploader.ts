// Drains the upload queue: each pending blob is copied to its content-addressed
// key (HeadObject first: a copy already there, from a run killed after its
// upload, is not sent again), its manifest record put beside it, and only then
// is the queue entry removed. One uploader at a time (a lock file naming its
// pid); an error stops the drain and leaves the rest queued for the next run.
import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream, promises as fsp, constants as C } from 'node:fs';
import * as path from 'node:path';
import { LineIndexer } from './line-index';
import { blobKeys, parseS3Url, transcriptKey } from './s3-location';
import { describeS3Error } from './s3-client';
import { ensureQueueDir, pendingNames, readPending, removePending, type PendingUpload } from './upload-queue';

/** Multipart above this (S3's minimum part is 5 MiB); parts in flight at once: memory stays under 4 x 8 MiB. */
export const PART_BYTES = 8 << 20;
export const PARTS_IN_FLIGHT = 4;

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

const LOCK = 'uploader.lock';

export async function drainUploads(dir: string, client: S3Client): Promise<DrainResult> {
  const result: DrainResult = { uploaded: 0, present: 0, dropped: 0, pending: 0 };
  await ensureQueueDir(dir);
  const release = await takeLock(dir);
  if (!release) return { ...result, busy: true, pending: (await pendingNames(dir)).length };
  try {
    const names = await pendingNames(dir);
    for (let i = 0; i < names.length; i++) {
      const item = await readPending(dir, names[i]!);
      if (!item) continue;
      let outcome: 'uploaded' | 'present' | 'dropped';
      try {
        outcome = await copyOne(client, item);
      } catch (err) {
        result.error = describeS3Error(err, `uploading ${item.file} to ${item.store}`);
        result.pending = names.length - i;
        return result;
      }
      result[outcome]++;
      await removePending(dir, names[i]!);
    }
    return result;
  } finally {
    await release();
  }
}

async function copyOne(client: S3Client, item: PendingUpload): Promise<'uploaded' | 'present' | 'dropped'> {
  if (item.kind === 'transcript') return copyTranscript(client, item);
  const loc = parseS3Url(item.store);
  const keys = blobKeys(loc, item.agent, item.sessionId, item.sha256);
  const st = await fsp.stat(item.file).catch(() => undefined);
  const there = await sizeAt(client, loc.bucket, keys.blob);
  const present = there === item.bytes;
  if (!present && (!st || st.size !== item.bytes)) return 'dropped';
  // The line index is built as the blob streams up (lib-storage holds at most PARTS_IN_FLIGHT parts, never the whole
  // blob); a copy already there only needs the index, read from the local file when it is still there.
  const indexer = new LineIndexer();
  if (st && st.size === item.bytes && item.bytes > 0) {
    const handle = await fsp.open(item.file, C.O_RDONLY | C.O_NOFOLLOW);
    try {
      const indexed = createReadStream('', { fd: handle.fd, autoClose: false, start: 0, end: item.bytes - 1 }).pipe(indexer);
      if (present) {
        for await (const _ of indexed);
      } else {
        await new Upload({
          client,
          params: { Bucket: loc.bucket, Key: keys.blob, Body: indexed, ContentLength: item.bytes, ContentType: 'text/plain; charset=utf-8' },
          partSize: PART_BYTES,
          queueSize: PARTS_IN_FLIGHT,
          leavePartsOnError: false,
        }).done();
      }
    } finally {
      await handle.close();
    }
  } else if (!present) {
    await client.send(new PutObjectCommand({ Bucket: loc.bucket, Key: keys.blob, Body: '', ContentType: 'text/plain; charset=utf-8' }));
  }
  const record = { ...item.record, agent: item.agent, lineIndex: indexer.index };
  await client.send(new PutObjectCommand({ Bucket: loc.bucket, Key: keys.record, Body: JSON.stringify(record) + '\n', ContentType: 'application/json' }));
  return present ? 'present' : 'uploaded';
}

/**
 * A session's transcript, as it is now, over its previous copy (the latest wins). A transcript only grows, so a
 * copy of the same size is this one: not sent again.
 */
async function copyTranscript(client: S3Client, item: PendingUpload): Promise<'uploaded' | 'present' | 'dropped'> {
  const loc = parseS3Url(item.store);
  const key = transcriptKey(loc, item.agent, item.sessionId);
  let handle;
  try {
    handle = await fsp.open(item.file, C.O_RDONLY | C.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return 'dropped';
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) return 'dropped';
    if ((await sizeAt(client, loc.bucket, key)) === st.size) return 'present';
    // Only the bytes there now: lines the agent appends meanwhile go up with the next entry.
    const body = st.size > 0 ? createReadStream('', { fd: handle.fd, autoClose: false, start: 0, end: st.size - 1 }) : '';
    await new Upload({
      client,
      params: { Bucket: loc.bucket, Key: key, Body: body, ContentLength: st.size, ContentType: 'application/x-ndjson' },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    }).done();
    return 'uploaded';
  } finally {
    await handle.close();
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

/** The queue's lock, or undefined while a live process holds it (a dead holder's lock is taken over). */
async function takeLock(dir: string): Promise<(() => Promise<void>) | undefined> {
  const file = path.join(dir, LOCK);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await fsp.open(file, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => fsp.rm(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(await fsp.readFile(file, 'utf8').catch(() => ''));
      if (holder > 0 && alive(holder)) return undefined;
      await fsp.rm(file, { force: true });
    }
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
