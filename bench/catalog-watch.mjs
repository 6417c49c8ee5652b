// Watcher latency: from a finished write (file closed) to the catalog event
// naming its session, over 200 writes. Target: p95 <= 500 ms.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fmt, lib, ms, now, percentile } from './catalog-common.mjs';

const WRITES = 200;
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
let waiting;
catalog.onDidChange(() => waiting?.());

const latencies = [];
const body = 'x'.repeat(100) + '\n';
for (let i = 0; i < WRITES; i++) {
  const dir = sessions[i % sessions.length];
  const file = path.join(dir, `${(0x100000 + i).toString(16)}-out.txt`);
  const content = body.repeat(200 + (i % 50) * 20);
  await fsp.writeFile(file, content); // resolves after close: the write is finished
  const start = now();
  await new Promise((resolve) => {
    waiting = () => {
      if (catalog.blob(file)?.bytes === content.length) resolve();
    };
    waiting();
  });
  latencies.push(ms(now() - start));
}
await catalog.dispose();
await fsp.rm(root, { recursive: true, force: true });
latencies.sort((a, b) => a - b);
const p95 = percentile(latencies, 95);
console.log(`${WRITES} writes across ${sessions.length} sessions (settle 150 ms, coalesce 75 ms)`);
console.log(`latency write->event: p50 ${fmt(percentile(latencies, 50))} ms, p95 ${fmt(p95)} ms, max ${fmt(latencies.at(-1))} ms`);
console.log(`target p95 <= 500 ms: ${p95 <= 500 ? 'PASS' : 'FAIL'}`);
