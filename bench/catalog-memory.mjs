// Memory per 100,000 blobs: heap growth of a scanned catalog holding 100,000
// blobs in 1,000 Claude Code sessions (transcripts included). Target <= 150 MB.
import v8 from 'node:v8';
import vm from 'node:vm';
import { claudeCorpus, fmt, lib, ms, now } from './catalog-common.mjs';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const mb = (bytes) => bytes / (1024 * 1024);

let t = now();
const root = await claudeCorpus('memory-1000x100', 1000, 100, 256);
console.log(`corpus ready in ${fmt(ms(now() - t) / 1000)} s`);
gc();
gc();
const before = process.memoryUsage();
t = now();
const catalog = new lib.Catalog({ roots: [root], useDefaultRoots: false });
await catalog.scan();
const scanMs = ms(now() - t);
gc();
gc();
const after = process.memoryUsage();
const blobs = catalog.sessions().reduce((n, s) => n + s.blobs.length, 0);
const heap = mb(after.heapUsed - before.heapUsed);
const rss = mb(after.rss - before.rss);
console.log(`blobs indexed: ${blobs} in ${catalog.sessions().length} sessions, scan ${fmt(scanMs / 1000, 2)} s`);
console.log(`heap growth: ${fmt(heap)} MB (${fmt((heap * 1024 * 1024) / blobs, 0)} bytes/blob), rss growth: ${fmt(rss)} MB`);
console.log(`per 100,000 blobs: ${fmt((heap * 100_000) / blobs)} MB heap (target <= 150 MB) ${(heap * 100_000) / blobs <= 150 ? 'PASS' : 'FAIL'}`);
await catalog.dispose();
