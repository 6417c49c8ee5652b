// grep over a remote root: objects streamed (never written to disk, never
// whole in memory), a few at a time, matches given out in listing order, and
// every request stopped once --max matches were found.
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { S3Location } from '../../spill/remote/s3-location';
import { listBlobs, type RemoteBlob } from './s3-listing';

/** Objects read at once: enough to hide a request's latency, few enough not to crowd a shared server. */
export const GREP_PARALLEL = 4;

export interface RemoteMatch {
  key: string;
  /** The blob as listed (its size, agent and session). */
  blob: RemoteBlob;
  line: number;
  text: string;
}

export interface RemoteGrepOptions {
  test: (line: string) => boolean;
  max: number;
  onMatch: (m: RemoteMatch) => void | Promise<void>;
}

export interface RemoteGrepSummary {
  matches: number;
  truncated: boolean;
  blobs: number;
}

export async function grepRemote(client: S3Client, loc: S3Location, opts: RemoteGrepOptions): Promise<RemoteGrepSummary> {
  const stop = new AbortController();
  let found = 0;
  let blobs = 0;
  const blobIter = listBlobs(client, loc);
  /** Blobs being searched, in listing order; each one's matches are given out once those before it are done. */
  const inFlight: Array<Promise<RemoteMatch[]>> = [];
  const launch = async (): Promise<boolean> => {
    const next = await blobIter.next();
    if (next.done) return false;
    blobs++;
    inFlight.push(searchBlob(client, loc.bucket, next.value, opts.test, opts.max, stop.signal));
    return true;
  };
  try {
    for (let i = 0; i < GREP_PARALLEL && (await launch()); i++);
    while (inFlight.length > 0) {
      const matches = await inFlight.shift()!;
      for (const m of matches) {
        if (found >= opts.max) {
          stop.abort();
          return { matches: found, truncated: true, blobs };
        }
        found++;
        await opts.onMatch(m);
      }
      if (found >= opts.max) {
        // Enough: the searches still running are stopped; whether more matches existed is not known without them.
        const more = inFlight.length > 0 || !(await blobIter.next()).done;
        stop.abort();
        return { matches: found, truncated: more, blobs };
      }
      await launch();
    }
    return { matches: found, truncated: false, blobs };
  } finally {
    stop.abort();
    await Promise.allSettled(inFlight);
    await blobIter.return(undefined);
  }
}

async function searchBlob(client: S3Client, bucket: string, blob: RemoteBlob, test: (line: string) => boolean, max: number, signal: AbortSignal): Promise<RemoteMatch[]> {
  const matches: RemoteMatch[] = [];
  let got;
  try {
    got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: blob.key }), { abortSignal: signal });
  } catch (err) {
    if (signal.aborted) return matches;
    throw err;
  }
  const body = got.Body as Readable;
  let line = 0;
  let carry = '';
  const decoder = new TextDecoder('utf-8');
  try {
    for await (const chunk of body) {
      const text = carry + decoder.decode(chunk as Buffer, { stream: true });
      const lines = text.split('\n');
      carry = lines.pop()!;
      for (const l of lines) {
        line++;
        if (test(l)) {
          matches.push({ key: blob.key, blob, line, text: l });
          if (matches.length >= max) return matches;
        }
      }
      if (signal.aborted) return matches;
    }
  } catch (err) {
    if (signal.aborted) return matches;
    throw err;
  } finally {
    body.destroy();
  }
  carry += decoder.decode();
  if (carry.length > 0 && test(carry)) matches.push({ key: blob.key, blob, line: line + 1, text: carry });
  return matches;
}
