// What the extension waits for before its first populated tree: a Catalog
// built as the extension builds it (the shared index in cacheDir) and
// scanned, at 100k blobs, from a warm index (present, nothing changed) and
// cold (no index), beside a readdir+stat walk of the same tree, in-process
// (the extension host is already running), in the same run. Each figure is a
// fresh process's first load (median of 3). Goal: warm <= 1 s.
// `node bench/catalog-warm-load.mjs` (after `npm run build`).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bareWalk } from './walk-common.mjs';
import { claudeCorpus, lib, ms, now } from './catalog-common.mjs';

const [mode, root, cacheDir] = process.argv.slice(2);
if (mode === 'walk' || mode === 'load') {
  // One timed load in this process; prints its ms.
  const t = now();
  if (mode === 'walk') await bareWalk(root);
  else {
    const catalog = new lib.Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
    await catalog.scan();
    const blobs = catalog.sessions().reduce((n, s) => n + s.blobs.length, 0);
    if (blobs === 0) throw new Error('no blobs found');
    await catalog.dispose();
  }
  console.log(ms(now() - t));
} else {
  const corpus = await claudeCorpus('scale-100k', 5000, 20);
  const cache = mkdtempSync(path.join(os.tmpdir(), 'bench-cache-'));
  const self = fileURLToPath(import.meta.url);
  const once = (what) => {
    const r = spawnSync(process.execPath, [self, what, corpus, cache], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    return Number(r.stdout.trim());
  };
  const median = (what, before) => {
    const runs = [0, 1, 2].map(() => (before?.(), once(what))).sort((a, b) => a - b);
    return runs[1];
  };
  const dropIndex = () => rmSync(cache, { recursive: true, force: true });
  console.log('100k blobs: 5000 Claude Code sessions x 20 blobs, in-process load (median of 3 fresh processes)');
  const walk = median('walk');
  const cold = median('load', dropIndex);
  const warm = median('load');
  console.log(`readdirSync+lstatSync walk${walk.toFixed(0)} ms`);
  console.log(`Catalog scan, cold       ${cold.toFixed(0)} ms (${(cold / walk).toFixed(2)}x the walk)`);
  console.log(`Catalog scan, warm index ${warm.toFixed(0)} ms (${(warm / walk).toFixed(2)}x the walk; goal <= 1,000 ms)`);
  rmSync(cache, { recursive: true, force: true });
}
