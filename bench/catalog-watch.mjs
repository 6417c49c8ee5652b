// Live updates as the extension gets them (catalog.watch()):
// - latency from a finished write (file closed) to the catalog event naming
//   its session, over 200 writes in 10 sessions, then over 100 writes into
//   sessions of the 100k-blob Claude Code corpus;
// - at 100k blobs, how long watch() takes to be ready and the process's
//   memory once it is, beside a readdirSync+lstatSync walk of the same tree.
// Target: p95 <= 500 ms. `node bench/catalog-watch.mjs [small|100k]`.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bareWalk, claudeCorpus, fmt, lib, ms, now, percentile } from './catalog-common.mjs';

const part = process.argv[2];
const mb = () => process.memoryUsage().rss / 1048576;

/** Writes `writes` new blobs, one at a time, into the folders `target(i)` names; resolves with each write's latency. */
async function latencies(catalog, writes, target) {
  let waiting;
  const listening = catalog.onDidChange(() => waiting?.());
  const body = 'x'.repeat(100) + '\n';
  const out = [];
  const written = [];
  for (let i = 0; i < writes; i++) {
    const file = target(i);
    const content = body.repeat(200 + (i % 50) * 20);
    await fsp.writeFile(file, content); // resolves after close: the write is finished
    written.push(file);
    const start = now();
    await new Promise((resolve) => {
      waiting = () => {
        if (catalog.blob(file)?.bytes === content.length) resolve();
      };
      waiting();
    });
    out.push(ms(now() - start));
  }
  listening.dispose();
  return { latencies: out.sort((a, b) => a - b), written };
}

function report(title, sorted) {
  const p95 = percentile(sorted, 95);
  console.log(title);
  console.log(`latency write->event: p50 ${fmt(percentile(sorted, 50))} ms, p95 ${fmt(p95)} ms, max ${fmt(sorted.at(-1))} ms (target p95 <= 500 ms: ${p95 <= 500 ? 'PASS' : 'FAIL'})`);
}

if (!part || part === 'small') {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'spillway-watch-bench-'));
  const sessions = Array.from({ length: 10 }, (_, i) => path.join(root, `session-${String(i).padStart(12, '0')}`));
  for (const dir of sessions) {
    await fsp.mkdir(dir, { recursive: true });
    await fsp.writeFile(path.join(dir, 'spillway.jsonl'), '');
    await fsp.writeFile(path.join(dir, '000000-seed.txt'), 'seed\n');
  }
  const catalog = new lib.Catalog({ roots: [root], useDefaultRoots: false });
  await catalog.scan();
  await catalog.watch();
  const { latencies: sorted } = await latencies(catalog, 200, (i) => path.join(sessions[i % sessions.length], `${(0x100000 + i).toString(16)}-out.txt`));
  await catalog.dispose();
  await fsp.rm(root, { recursive: true, force: true });
  report(`200 writes across ${sessions.length} sessions (settle 150 ms, coalesce 75 ms)`, sorted);
}

if (!part || part === '100k') {
  const corpus = await claudeCorpus('scale-100k', 5000, 20);
  const cacheDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'spillway-watch-cache-'));
  let t = now();
  bareWalk(corpus);
  const walkMs = ms(now() - t);
  const catalog = new lib.Catalog({ roots: [corpus], useDefaultRoots: false, cacheDir });
  await catalog.scan();
  const scanned = mb();
  t = now();
  await catalog.watch();
  const watchMs = ms(now() - t);
  console.log(`\n100k blobs (5,000 Claude Code sessions x 20): watch() ready in ${watchMs.toFixed(0)} ms (readdirSync+lstatSync walk: ${walkMs.toFixed(0)} ms); RSS ${scanned.toFixed(0)} MB after the scan, ${mb().toFixed(0)} MB watching`);
  // New blobs in sessions spread over the corpus (removed afterwards: the corpus is shared).
  const sessions = catalog.sessions();
  const { latencies: sorted, written } = await latencies(catalog, 100, (i) => {
    const s = sessions[(i * 47) % sessions.length];
    return path.join(s.dir, 'tool-results', `toolu_watch${String(i).padStart(6, '0')}.txt`);
  });
  await catalog.dispose();
  for (const file of written) await fsp.rm(file, { force: true });
  await fsp.rm(cacheDir, { recursive: true, force: true });
  report('100 writes into sessions of the 100k corpus', sorted);
}
