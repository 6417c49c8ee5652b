// clean on a remote root: a plan of exactly which objects go (each blob and the
// record beside it, all under the prefix), then DeleteObjects on those keys
// and no others, 1,000 a request.
import { DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { recordKeyFor, type S3Location } from '../../spill/remote/s3-location';
import { listBlobs, type RemoteBlob } from './s3-listing';

export type RemoteCleanTarget = { kind: 'session'; sessionId: string } | { kind: 'older'; beforeMs: number };

export interface RemoteCleanPlan {
  blobs: RemoteBlob[];
  bytes: number;
}

export async function planRemoteClean(client: S3Client, loc: S3Location, target: RemoteCleanTarget): Promise<RemoteCleanPlan> {
  const blobs: RemoteBlob[] = [];
  let bytes = 0;
  for await (const b of listBlobs(client, loc)) {
    const chosen = target.kind === 'session' ? b.sessionId === target.sessionId : b.mtimeMs < target.beforeMs;
    if (!chosen) continue;
    blobs.push(b);
    bytes += b.bytes;
  }
  return { blobs, bytes };
}

export interface RemoteCleanResult {
  deleted: string[];
  failed: Array<{ key: string; reason: string }>;
}

export async function executeRemoteClean(client: S3Client, loc: S3Location, plan: RemoteCleanPlan): Promise<RemoteCleanResult> {
  const keys = plan.blobs.flatMap((b) => [b.key, recordKeyFor(b.key)]);
  // The plan came from a listing of the prefix; a key outside it would be a bug, never a deletion.
  for (const k of keys) if (!k.startsWith(loc.prefix)) throw new Error(`refusing to delete '${k}': outside ${loc.prefix}`);
  const result: RemoteCleanResult = { deleted: [], failed: [] };
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    const r = await client.send(new DeleteObjectsCommand({ Bucket: loc.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: false } }));
    for (const e of r.Errors ?? []) result.failed.push({ key: e.Key ?? '?', reason: `${e.Code}: ${e.Message}` });
    const failed = new Set((r.Errors ?? []).map((e) => e.Key));
    // A missing record (a blob whose record was never put) is not a failure: S3 reports deleting it all the same.
    result.deleted.push(...batch.filter((k) => !failed.has(k)));
  }
  return result;
}
