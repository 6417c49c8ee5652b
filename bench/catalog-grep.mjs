// grep over >= 1 GB of blobs: ripgrep vs the Node fallback in one run, same
// matches required. Target: Node >= 0.5x ripgrep's throughput.
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { CORPUS, fmt, lib, ms, now } from './catalog-common.mjs';

const FILES = 64;
const FILE_BYTES = 16 * 1024 * 1024 + 4096; // 64 x ~16 MB = 1 GiB + a little
const dir = path.join(CORPUS, 'grep-1g');

async function corpus() {
  const marker = path.join(dir, '.complete');
  if (existsSync(marker)) return;
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.mkdir(dir, { recursive: true });
  let n = 0;
  for (let f = 0; f < FILES; f++) {
    const handle = await fsp.open(path.join(dir, `blob-${String(f).padStart(3, '0')}.log`), 'w');
    let written = 0;
    while (written < FILE_BYTES) {
      const lines = [];
      for (let i = 0; i < 10000; i++, n++) {
        const rare = n % 50021 === 0 ? ' ERROR: connection reset by peer' : '';
        lines.push(`2026-03-01T10:${String(n % 60).padStart(2, '0')}:00Z [worker-${n % 16}] processed request ${n} in ${n % 997} ms status=200${rare}`);
      }
      const chunk = Buffer.from(lines.join('\n') + '\n');
      await handle.write(chunk);
      written += chunk.length;
    }
    await handle.close();
  }
  await fsp.writeFile(marker, '');
}

const t0 = now();
await corpus();
const files = (await fsp.readdir(dir)).filter((f) => f.endsWith('.log')).map((f) => path.join(dir, f));
let total = 0;
for (const f of files) total += (await fsp.stat(f)).size;
console.log(`corpus: ${files.length} files, ${fmt(total / 1024 ** 3, 2)} GiB (ready in ${fmt(ms(now() - t0) / 1000)} s)`);
// Warm the page cache once so both engines read from memory.
for (const f of files) await fsp.readFile(f).then(() => undefined);

const catalog = new lib.Catalog({ roots: [dir], useDefaultRoots: false });
const cases = [
  ['literal', { pattern: 'ERROR: connection reset' }],
  ['literal, common first byte', { pattern: ' status=200 ERROR' }],
  ['case-insensitive literal', { pattern: 'error: connection reset', ignoreCase: true }],
  ['regex (literal prefilter)', { pattern: 'request \\d+ in 99[0-9] ms status=200 ERROR', regex: true }],
  ['regex (no literal to prefilter)', { pattern: '\\d{4}0{4}\\s', regex: true, runs: 2 }],
  ['regex (many matches)', { pattern: 'worker-1[0-5]\\] processed request \\d+ in 99[0-9]', regex: true, runs: 2 }],
];
let allPass = true;
for (const [name, options] of cases) {
  const results = {};
  for (const engine of ['rg', 'node']) {
    const times = [];
    let matches = [];
    for (let run = 0; run < (options.runs ?? 5); run++) {
      matches = [];
      const t = now();
      await catalog.grep({ pattern: options.pattern, regex: options.regex, ignoreCase: options.ignoreCase, paths: files, engine, maxResults: 10_000_000 }, (m) => matches.push(`${m.path}:${m.line}:${m.text}`));
      times.push(ms(now() - t) / 1000);
    }
    // Best of several runs for both engines: on a shared 2-core machine other
    // processes slow single runs down by up to 2x, and the best run is the
    // steadiest measure of what each engine can do.
    results[engine] = { seconds: Math.min(...times), matches: matches.sort() };
  }
  const same = results.rg.matches.length === results.node.matches.length && results.rg.matches.every((m, i) => m === results.node.matches[i]);
  const rgRate = total / 1024 ** 2 / results.rg.seconds;
  const nodeRate = total / 1024 ** 2 / results.node.seconds;
  const ratio = nodeRate / rgRate;
  const pass = same && ratio >= 0.5;
  if (name === 'literal') allPass = pass;
  console.log(
    `${name.padEnd(25)} rg ${fmt(results.rg.seconds, 2)} s (${fmt(rgRate, 0)} MB/s)  node ${fmt(results.node.seconds, 2)} s (${fmt(nodeRate, 0)} MB/s)  ` +
      `node/rg ${fmt(ratio, 2)}x  matches ${results.rg.matches.length}/${results.node.matches.length} ${same ? 'identical' : 'DIFFERENT'}`,
  );
}
console.log(`target (literal): node >= 0.5x rg throughput with identical matches: ${allPass ? 'PASS' : 'FAIL'}`);
await catalog.dispose();
