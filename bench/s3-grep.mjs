// `spillway grep NEEDLE --root s3://BUCKET` over 1 GB of remote blobs (1,000
// objects of 1 MB, the needle on one line of each), every match printed, and
// again with --max 10, process start to exit, beside the obvious alternative:
// a Node program downloading every object with the SDK (4 at once, as spillway
// reads them) and running `rg -n -F` on them, in turn, against a real RGW
// this benchmark starts. Goal: within 1.5x. BENCH_S3_QUICK=1: 16 objects.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { CORPUS } from './catalog-common.mjs';
import { CLI, measureInTurnAsync, row } from './catalog-process-common.mjs';
import { MB, QUICK, RUNS, SDK, inParallel, mbps, printNodeFloor, s3Env, startBenchRgw, textChunk } from './s3-common.mjs';

const BUCKET = 'bench';
const NEEDLE = 'NEEDLE';
const OBJECTS = QUICK ? 16 : 1000;
const LINES = MB / 64;
const PER_SESSION = 20;
const download = path.join(CORPUS, 's3-grep-download');

const rgw = await startBenchRgw(BUCKET, QUICK ? 1 : 3);
try {
  const client = rgw.client();
  const keys = Array.from({ length: OBJECTS }, (_, i) => `bench/run-${String(Math.floor(i / PER_SESSION)).padStart(3, '0')}/${String(i).padStart(64, '0')}.txt`);
  await inParallel(keys.map((Key, i) => ({ Key, i })), 8, ({ Key, i }) => client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: textChunk(i * LINES, LINES, NEEDLE, LINES) })));
  const env = s3Env(rgw);
  const grep = (...extra) => [CLI, 'grep', NEEDLE, '--root', `s3://${BUCKET}`, ...extra];
  // Every match, and no more (straight to the server, outside the timing).
  const printed = execFileSync(process.execPath, grep('--max', '100000000'), { env, encoding: 'utf8' }).trim().split('\n');
  if (printed.length !== OBJECTS) throw new Error(`spillway grep printed ${printed.length} matches, expected ${OBJECTS}`);
  const fresh = async () => {
    await fsp.rm(download, { recursive: true, force: true });
    await fsp.mkdir(download, { recursive: true });
  };
  console.log(`Object store: Ceph RGW (memstore) on 127.0.0.1, started by this benchmark${QUICK ? ' (quick sizes)' : ''}`);
  await printNodeFloor();
  const [sdk, all, ten] = await measureInTurnAsync([
    { command: process.execPath, args: [SDK, 'grep', BUCKET, '', download, NEEDLE], env, before: fresh },
    { command: process.execPath, args: grep('--max', '100000000'), env },
    { command: process.execPath, args: grep('--max', '10'), env },
  ], RUNS);
  await fsp.rm(download, { recursive: true, force: true });
  const bytes = OBJECTS * MB;
  console.log(`\n${OBJECTS} objects x 1 MB, ${OBJECTS} matches (${RUNS} runs in turn, medians)`);
  console.log(row('SDK download (4 at once) + rg -n -F', sdk) + `  ${mbps(bytes, sdk.ms).toFixed(1)} MB/s`);
  console.log(row('spillway grep --root s3://… (every match)', all) + `  ${mbps(bytes, all.ms).toFixed(1)} MB/s  ${(all.ms / sdk.ms).toFixed(2)}x the SDK + rg`);
  console.log(row('spillway grep --root s3://… --max 10', ten) + `  ${(ten.ms / sdk.ms).toFixed(2)}x the SDK + rg`);
} finally {
  await rgw.stop();
}
