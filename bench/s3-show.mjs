// `spillway show s3://…/blob --lines A:B` on a 1 GB object (20 lines near its
// end), process start to exit, beside downloading the object with the SDK, in
// turn, against a real RGW this benchmark starts; both through a counting
// proxy, so the bytes each read from the server are printed: the slice is a
// ranged read (about a megabyte from the record's line index), not a download.
// The blob is put there by `spillway upload` (its record carries the index).
// BENCH_S3_QUICK=1: an 8 MB object.
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { CORPUS } from './catalog-common.mjs';
import { CLI, measureInTurnAsync, row, runOnceAsync } from './catalog-process-common.mjs';
import { MB, QUICK, RUNS, SDK, numberedFile, printNodeFloor, queueUploads, s3Env, startBenchRgw, startCountingProxy } from './s3-common.mjs';

const BUCKET = 'bench';
const BYTES = QUICK ? 8 * MB : 1024 * MB;
const LINES = BYTES / 64;
const [A, B] = [LINES - 1000, LINES - 981];
const root = path.join(CORPUS, `s3-show-${QUICK ? 'quick' : 'full'}`);
const blob = await numberedFile(path.join(root, 'big.txt'), BYTES);

const rgw = await startBenchRgw(BUCKET, QUICK ? 1 : 3);
const proxy = await startCountingProxy(rgw.endpoint);
try {
  const { env: uploadEnv, keys } = await queueUploads(path.join(root, 'queue'), `s3://${BUCKET}`, [blob], s3Env(rgw));
  execFileSync(process.execPath, [CLI, 'upload', '--quiet'], { env: uploadEnv });
  const url = `s3://${BUCKET}/${keys[0]}`;
  const show = [CLI, 'show', url, '--lines', `${A}:${B}`];
  // The slice is the right one (straight to the server, outside the timing).
  const printed = execFileSync(process.execPath, show, { env: s3Env(rgw), encoding: 'utf8' }).split('\n');
  if (printed.length !== B - A + 2 || !printed[0].startsWith(`ok step ${A - 1} `)) throw new Error(`show printed ${printed.length} lines starting '${printed[0]}'`);

  const env = s3Env(rgw, { AWS_ENDPOINT_URL: proxy.endpoint });
  const download = path.join(root, 'downloaded.txt');
  const sdkArgs = [SDK, 'get', BUCKET, keys[0], download];
  const bytesOf = async (args) => {
    proxy.bytesOut = 0;
    await runOnceAsync(process.execPath, args, { env });
    return proxy.bytesOut;
  };
  const [sdkBytes, showBytes] = [await bytesOf(sdkArgs), await bytesOf(show)];
  console.log(`Object store: Ceph RGW (memstore) on 127.0.0.1, started by this benchmark${QUICK ? ' (quick sizes)' : ''}`);
  await printNodeFloor();
  const [sdk, slice] = await measureInTurnAsync([
    { command: process.execPath, args: sdkArgs, env },
    { command: process.execPath, args: show, env },
  ], RUNS);
  await fsp.rm(download, { force: true });
  console.log(`\none object of ${BYTES / MB} MB, ${LINES.toLocaleString('en-US')} lines; lines ${A}:${B} (${RUNS} runs in turn, medians)`);
  console.log(row('SDK GetObject of the whole object', sdk) + `  ${(sdkBytes / MB).toFixed(1)} MB read`);
  console.log(row(`spillway show s3://… --lines ${A}:${B}`, slice) + `  ${(showBytes / MB).toFixed(2)} MB read  ${(sdk.ms / slice.ms).toFixed(1)}x faster`);
} finally {
  await proxy.close();
  await rgw.stop();
}
