// `spillway upload` as a user (or the detached uploader) runs it, process start
// to exit, against a real RGW this benchmark starts: 1,000 queued blobs of
// 16 KB, and one blob of 1 GB, beside a bare SDK program sending the same
// files (a PutObject loop; lib-storage's Upload), in turn, in the same run.
// Each run starts from an empty prefix (spillway would skip a copy already
// there). Goal: >= 0.8x the SDK's throughput. BENCH_S3_QUICK=1: 50 blobs, 8 MB.
// `node bench/s3-upload.mjs small|big` runs one part.
// The uploader sends 8 entries at once; the bare loop sends one file after another, as a plain script would.
import { DeleteObjectsCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { CORPUS } from './catalog-common.mjs';
import { CLI, measureInTurnAsync, row } from './catalog-process-common.mjs';
import { MB, QUICK, RUNS, SDK, mbps, numberedFile, printNodeFloor, queueUploads, s3Env, sha256Of, startBenchRgw, textChunk } from './s3-common.mjs';

const BUCKET = 'bench';
const SMALL = QUICK ? 50 : 1000;
const SMALL_BYTES = 16 << 10;
// BENCH_S3_BIG_MB: another size for the big blob (the memstore RGW holds a few copies of it in memory).
const BIG_BYTES = (Number(process.env.BENCH_S3_BIG_MB) || (QUICK ? 8 : 1024)) * MB;
const root = path.join(CORPUS, `s3-upload-${QUICK ? 'quick' : 'full'}`);

/** The files, written once and reused: SMALL distinct blobs and one big one (64-byte numbered lines). */
async function corpus() {
  const small = Array.from({ length: SMALL }, (_, i) => path.join(root, 'small', `blob-${String(i).padStart(4, '0')}.txt`));
  if (!existsSync(path.join(root, 'small', '.complete'))) {
    await fsp.rm(path.join(root, 'small'), { recursive: true, force: true });
    await fsp.mkdir(path.join(root, 'small'), { recursive: true });
    for (const [i, f] of small.entries()) await fsp.writeFile(f, textChunk(i * 256, SMALL_BYTES / 64));
    await fsp.writeFile(path.join(root, 'small', '.complete'), '');
  }
  return { small, big: await numberedFile(path.join(root, 'big.txt'), BIG_BYTES) };
}

const { small, big } = await corpus();
const part = process.argv[2];
// The memstore RGW holds the object, its parts in flight and the other side's copy: about ten times the big blob.
const rgw = await startBenchRgw(BUCKET, QUICK ? 1 : Math.max(4, (10 * BIG_BYTES) / (1024 * MB)));
const client = rgw.client();
const env = s3Env(rgw);

async function emptyPrefix(prefix) {
  for (;;) {
    const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    if (!page.Contents?.length) return;
    await client.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: page.Contents.map((o) => ({ Key: o.Key })), Quiet: true } }));
  }
}

/** A fresh queue holding `files`, as the spill side writes it; the environment of the command that drains it. */
async function queued(name, store, files) {
  return (await queueUploads(path.join(root, `queue-${name}`), store, files, env)).env;
}

async function compare(title, files, bytes, sdkArgs) {
  const label = title.replace(/\W+/g, '-');
  const spillwayPrefix = `spillway-${label}/`;
  const sdkPrefix = `sdk-${label}/`;
  // The queue is written before each run, outside the timing (the spill wrote it when it happened).
  const queueEnv = await queued(label, `s3://${BUCKET}/${spillwayPrefix}`, files);
  const [sdk, spillway] = await measureInTurnAsync([
    { command: process.execPath, args: [SDK, ...sdkArgs(sdkPrefix)], env, before: () => emptyPrefix(sdkPrefix) },
    { command: process.execPath, args: [CLI, 'upload'], env: queueEnv, before: async () => {
      await emptyPrefix(spillwayPrefix);
      await queued(label, `s3://${BUCKET}/${spillwayPrefix}`, files);
    } },
  ], RUNS);
  // A run that left anything queued uploaded less than it was timed for.
  const left = (await fsp.readdir(queueEnv.SPILLWAY_UPLOAD_QUEUE)).filter((n) => n.endsWith('.pending.json'));
  if (left.length > 0) throw new Error(`spillway upload left ${left.length} queued`);
  console.log(`\n${title}: ${(bytes / MB).toFixed(1)} MB (${RUNS} runs in turn, medians)`);
  console.log(row(`bare SDK (${sdkArgs('')[0] === 'put' ? 'PutObject loop' : 'lib-storage Upload'})`, sdk) + `  ${mbps(bytes, sdk.ms).toFixed(1)} MB/s`);
  console.log(row('spillway upload', spillway) + `  ${mbps(bytes, spillway.ms).toFixed(1)} MB/s  ${(sdk.ms / spillway.ms).toFixed(2)}x the SDK's throughput`);
  await emptyPrefix(spillwayPrefix);
  await emptyPrefix(sdkPrefix);
}

try {
  console.log(`Object store: Ceph RGW (memstore) on 127.0.0.1, started by this benchmark${QUICK ? ' (quick sizes)' : ''}`);
  await printNodeFloor();
  if (part !== 'big') await compare(`${SMALL} blobs x 16 KB`, small, SMALL * SMALL_BYTES, (prefix) => ['put', BUCKET, prefix, ...small]);
  if (part !== 'small') {
    await compare(`one blob of ${BIG_BYTES / MB} MB`, [big], BIG_BYTES, (prefix) => ['upload', BUCKET, `${prefix}big.txt`, big]);
    // The big copy arrived whole (the last run's, deleted above, was checked by the empty queue; one more, checked by size).
    const bigEnv = await queued('check', `s3://${BUCKET}/check/`, [big]);
    await measureInTurnAsync([{ command: process.execPath, args: [CLI, 'upload', '--quiet'], env: bigEnv }], 1);
    const sha = await sha256Of(big);
    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `check/bench/run-1/${sha}.txt` }));
    if (head.ContentLength !== BIG_BYTES) throw new Error(`uploaded ${head.ContentLength} bytes, expected ${BIG_BYTES}`);
  }
} finally {
  await rgw.stop();
}
