// One S3 client, set up the way the SDK's users expect: credentials, region and
// endpoint from its default chain (env keys, profiles, AWS_REGION,
// AWS_ENDPOINT_URL). A custom endpoint (Ceph RGW, MinIO) gets path-style
// addressing: such servers seldom have wildcard DNS for bucket subdomains.
// Checksums only when an operation needs them: servers that predate the SDK's
// default CRC32 trailers refuse a streamed body with 411 otherwise.
import { S3Client } from '@aws-sdk/client-s3';

/** Attempts per request (the SDK's own backoff between them): an outage fails in seconds, not minutes. */
export const S3_MAX_ATTEMPTS = 3;

export function newS3Client(env: NodeJS.ProcessEnv = process.env): S3Client {
  // The pinned SDK runs on Node 20 (this package's floor); its notice about later versions would land in every command's stderr.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL;
  return new S3Client({
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    // A custom endpoint often has no region of its own; the SDK insists on one to sign.
    ...(endpoint && !env.AWS_REGION && !env.AWS_DEFAULT_REGION ? { region: 'us-east-1' } : {}),
    maxAttempts: S3_MAX_ATTEMPTS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
  });
}

/** What an S3 failure was, in words a person can act on. */
export function describeS3Error(err: unknown, what: string): string {
  const e = err as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  const name = e?.name ?? e?.code ?? 'Error';
  const hint =
    name === 'NoSuchBucket' ? 'the bucket does not exist'
    : name === 'InvalidAccessKeyId' || name === 'SignatureDoesNotMatch' || status === 403 ? 'the credentials were refused'
    : e?.code === 'ECONNREFUSED' || /ECONNREFUSED/.test(e?.message ?? '') ? 'nothing answers at the endpoint'
    : status !== undefined && status >= 500 ? `the server failed (HTTP ${status})`
    : undefined;
  return `${what}: ${hint ? `${hint} (${name}${e?.message && e.message !== name ? `: ${e.message}` : ''})` : `${name}: ${e?.message ?? String(err)}`}`;
}
