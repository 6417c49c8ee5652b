// What the extension waits for before its first populated tree: a Catalog
// built as the extension builds it (the shared index in cacheDir) at 100k
// blobs, from a warm index (present, nothing changed) and cold (no index),
// beside a readdirSync+lstatSync walk of the same tree, in-process (the
// extension host is already running), in the same run. Each figure is a
// fresh process's first load (median of 3). From a warm index the tree is
// populated by showIndexed() (the newest sessions, then the rest) and the
// scan checks it afterwards; all three are timed. Goal: first populated tree
// from a warm index <= 1 s (bench/extension-tree.mjs times it in VS Code).
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
  // Prints the ms to the first populated catalog, then to the end of its scan.
  const t = now();
  if (mode === 'walk') {
    bareWalk(root);
    console.log(ms(now() - t), ms(now() - t));
  } else {
    const catalog = new lib.Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
    const blobs = () => catalog.sessions().reduce((n, s) => n + s.blobs.length, 0);
    // The index's newest sessions come first, the rest after them (each with an event), then the scan checks them.
    let allShown;
    catalog.onDidChange(() => (allShown = ms(now() - t)));
    const shown = (await catalog.showIndexed()) && blobs() > 0 ? ms(now() - t) : undefined;
    await catalog.scan();
    if (blobs() === 0) throw new Error('no blobs found');
    const scanned = ms(now() - t);
    await catalog.dispose();
    console.log(shown ?? scanned, (shown && allShown) ?? scanned, scanned);
  }
} else {
  const corpus = await claudeCorpus('scale-100k', 5000, 20);
  const cache = mkdtempSync(path.join(os.tmpdir(), 'bench-cache-'));
  const self = fileURLToPath(import.meta.url);
  const once = (what) => {
    const r = spawnSync(process.execPath, [self, what, corpus, cache], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    return r.stdout.trim().split(' ').map(Number);
  };
  /** Medians of [first populated, everything shown, scanned]. */
  const median = (what, before) => {
    const runs = [0, 1, 2].map(() => (before?.(), once(what)));
    return [0, 1, 2].map((i) => runs.map((r) => r[i]).sort((a, b) => a - b)[1]);
  };
  const dropIndex = () => rmSync(cache, { recursive: true, force: true });
  console.log('100k blobs: 5000 Claude Code sessions x 20 blobs, in-process load (median of 3 fresh processes)');
  const walk = median('walk');
  const cold = median('load', dropIndex);
  const warm = median('load');
  const [walkMs] = walk;
  console.log(`readdirSync+lstatSync walk                ${walkMs.toFixed(0)} ms`);
  console.log(`cold, first populated = scanned           ${cold[2].toFixed(0)} ms (${(cold[2] / walkMs).toFixed(2)}x the walk)`);
  console.log(`warm index, first populated (shown)       ${warm[0].toFixed(0)} ms (${(warm[0] / walkMs).toFixed(2)}x the walk; goal <= 1,000 ms)`);
  console.log(`warm index, every session shown           ${warm[1].toFixed(0)} ms (${(warm[1] / walkMs).toFixed(2)}x the walk)`);
  console.log(`warm index, scan done (checked)           ${warm[2].toFixed(0)} ms (${(warm[2] / walkMs).toFixed(2)}x the walk)`);
  rmSync(cache, { recursive: true, force: true });
}
