// A remote root's blobs, read page by page (ListObjectsV2, 1,000 keys a page):
// never the whole listing in memory, each session's blobs together (keys come
// sorted, and a session is one folder of the layout AGENT/SESSION/SHA256.txt).
import { ListObjectsV2Command, type ListObjectsV2CommandOutput, type S3Client } from '@aws-sdk/client-s3';
import type { S3Location } from '../../spill/remote/s3-location';

export interface RemoteBlob {
  key: string;
  bytes: number;
  mtimeMs: number;
  agent: string;
  sessionId: string;
}

export interface RemoteSession {
  agent: string;
  id: string;
  blobs: RemoteBlob[];
  bytes: number;
}

/**
 * Every object under the prefix, in key order. The next page is asked for before this one's keys are given out, so
 * the server's answer and the caller's work on a page overlap (two pages in memory at most).
 */
export async function* listObjects(client: S3Client, loc: S3Location, within = ''): AsyncGenerator<{ key: string; bytes: number; mtimeMs: number }> {
  const pageAfter = (token: string | undefined): Promise<ListObjectsV2CommandOutput> => client.send(new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: loc.prefix + within, ContinuationToken: token }));
  let next: Promise<ListObjectsV2CommandOutput> | undefined = pageAfter(undefined);
  try {
    while (next) {
      const page: ListObjectsV2CommandOutput = await next;
      next = page.IsTruncated && page.NextContinuationToken ? pageAfter(page.NextContinuationToken) : undefined;
      for (const o of page.Contents ?? []) if (o.Key) yield { key: o.Key, bytes: o.Size ?? 0, mtimeMs: o.LastModified?.getTime() ?? 0 };
    }
  } finally {
    // A caller that stops early leaves no request unanswered to fail unseen.
    next?.catch(() => undefined);
  }
}

/** The blobs (`AGENT/SESSION/NAME.txt` under the prefix); records and keys of other shapes are not blobs. */
export async function* listBlobs(client: S3Client, loc: S3Location): AsyncGenerator<RemoteBlob> {
  for await (const o of listObjects(client, loc)) {
    const parts = o.key.slice(loc.prefix.length).split('/');
    if (parts.length !== 3 || !parts[2]!.endsWith('.txt')) continue;
    yield { ...o, agent: parts[0]!, sessionId: parts[1]! };
  }
}

/** The blobs grouped by session, one session at a time. */
export async function* listSessions(client: S3Client, loc: S3Location): AsyncGenerator<RemoteSession> {
  let current: RemoteSession | undefined;
  for await (const blob of listBlobs(client, loc)) {
    if (current && (current.agent !== blob.agent || current.id !== blob.sessionId)) {
      yield current;
      current = undefined;
    }
    current ??= { agent: blob.agent, id: blob.sessionId, blobs: [], bytes: 0 };
    current.blobs.push(blob);
    current.bytes += blob.bytes;
  }
  if (current) yield current;
}
