// `s3://BUCKET/PREFIX`: where a team's spills are copied, and the keys under it.
// Layout: PREFIX/AGENT/SESSION/SHA256.txt (the blob, keyed by its content, so a
// second upload of the same body is the same object) and SHA256.json beside it
// (its manifest record); PREFIX/AGENT/SESSION/transcript.jsonl is the session's
// transcript (the latest copy), for attribution and the per-turn chart.

export interface S3Location {
  bucket: string;
  /** Empty, or ends with `/`. */
  prefix: string;
}

export const S3_SCHEME = 's3://';

export function isS3Url(text: string | undefined): text is string {
  return typeof text === 'string' && text.startsWith(S3_SCHEME);
}

/** Parses `s3://BUCKET[/PREFIX]`; a clear error for anything else (no bucket, a bucket name S3 refuses). */
export function parseS3Url(url: string): S3Location {
  if (!isS3Url(url)) throw new Error(`not an s3:// location: '${url}'`);
  const rest = url.slice(S3_SCHEME.length);
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new Error(`'${url}': '${bucket}' is not a valid bucket name`);
  const path = slash < 0 ? '' : rest.slice(slash + 1);
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.some((p) => p === '.' || p === '..')) throw new Error(`'${url}': '.' and '..' are not allowed in the prefix`);
  return { bucket, prefix: parts.length > 0 ? parts.join('/') + '/' : '' };
}

/** The location (or one of its keys) as a URL. */
export function s3Url(loc: S3Location, key = loc.prefix): string {
  return `${S3_SCHEME}${loc.bucket}/${key}`;
}

/** A key segment from an agent or session name: `/` and control characters cannot split or hide a key. */
export function keySegment(name: string): string {
  // eslint-disable-next-line no-control-regex
  const s = name.replace(/[/\\\x00-\x1f\x7f]/g, '_');
  return s === '' || s === '.' || s === '..' ? `_${s}` : s;
}

export interface BlobKeys {
  blob: string;
  record: string;
}

export function blobKeys(loc: S3Location, agent: string, sessionId: string, sha256: string): BlobKeys {
  const base = `${loc.prefix}${keySegment(agent)}/${keySegment(sessionId)}/${sha256}`;
  return { blob: `${base}.txt`, record: `${base}.json` };
}

/** The record key beside a blob key (`….txt` -> `….json`). */
export function recordKeyFor(blobKey: string): string {
  return blobKey.replace(/\.txt$/, '') + '.json';
}

/** The name of a session's transcript copy, beside its blobs. */
export const TRANSCRIPT_NAME = 'transcript.jsonl';
/** The transcript copy's metadata (`x-amz-meta-…`) holding the session's title, URI-encoded (headers are ASCII). */
export const TITLE_METADATA = 'spillway-title';

export function transcriptKey(loc: S3Location, agent: string, sessionId: string): string {
  return `${loc.prefix}${keySegment(agent)}/${keySegment(sessionId)}/${TRANSCRIPT_NAME}`;
}
