// `spillway list --root s3://BUCKET` over 100,000 keys (5,000 sessions of 20
// blobs), process start to exit, beside a bare ListObjectsV2 loop in Node that
// prints each key and size, in turn, against a real RGW this benchmark starts.
// Goal: <= 1.2x the bare loop. BENCH_S3_QUICK=1: 2,500 keys (three pages).
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CLI, measureInTurnAsync, row } from './catalog-process-common.mjs';
import { QUICK, RUNS, SDK, inParallel, printNodeFloor, s3Env, startBenchRgw } from './s3-common.mjs';

const BUCKET = 'bench';
const KEYS = QUICK ? 2500 : 100_000;
const PER_SESSION = 20;

const rgw = await startBenchRgw(BUCKET, 1);
try {
  const client = rgw.client();
  const keys = Array.from({ length: KEYS }, (_, i) => {
    const session = `run-${String(Math.floor(i / PER_SESSION)).padStart(5, '0')}`;
    return `bench/${session}/${String(i).padStart(64, '0')}.txt`;
  });
  await inParallel(keys, 32, (Key) => client.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: `${Key}\n` })));
  const env = s3Env(rgw);
  console.log(`Object store: Ceph RGW (memstore) on 127.0.0.1, started by this benchmark${QUICK ? ' (quick sizes)' : ''}`);
  await printNodeFloor();
  const [sdk, human, json] = await measureInTurnAsync([
    { command: process.execPath, args: [SDK, 'list', BUCKET, ''], env },
    { command: process.execPath, args: [CLI, 'list', '--root', `s3://${BUCKET}`], env },
    { command: process.execPath, args: [CLI, 'list', '--root', `s3://${BUCKET}`, '--json'], env },
  ], RUNS);
  console.log(`\n${KEYS.toLocaleString('en-US')} keys in ${KEYS / PER_SESSION} sessions (${RUNS} runs in turn, medians)`);
  console.log(row('bare ListObjectsV2 loop (key, size printed)', sdk));
  console.log(row('spillway list --root s3://…', human) + `  ${(human.ms / sdk.ms).toFixed(2)}x the loop`);
  console.log(row('spillway list --root s3://… --json', json) + `  ${(json.ms / sdk.ms).toFixed(2)}x the loop`);
} finally {
  await rgw.stop();
}
