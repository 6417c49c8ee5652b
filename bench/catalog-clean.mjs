// `spillway clean` as a user types it (process start to exit, index warm)
// beside `find -delete` of the same files, each on a fresh copy of the same
// Claude Code corpus, in the same run: the plan alone (--dry-run, beside
// `find -printf` listing the files) and the deletion of every blob
// (--max-total 0 --yes). Clean must cost what deleting the files costs, plus
// the catalog's scan; before it held each file's folder open step by step
// from the root, and a 48,798-blob plan took 48 s at 100k.
// `node bench/catalog-clean.mjs 100k` runs the 100,000-blob corpus (10k by default).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { claudeCorpus } from './catalog-common.mjs';
import { CLI, measure, row, userEnv } from './catalog-process-common.mjs';

const [name, corpus, sessions] = process.argv[2] === '100k' ? ['100k', 'scale-100k', 5000] : ['10k', 'scale-10k', 500];
const source = await claudeCorpus(corpus, sessions, 20);
const work = mkdtempSync(path.join(os.tmpdir(), 'bench-clean-'));
const copy = path.join(work, 'root');
// As a user types it: the copy is Claude Code's folder, among the default roots (userEnv).
const user = userEnv(copy);
const { env, cache } = user;
const spillway = (...args) => [CLI, ...args];
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { env, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
};
/** A fresh copy of the corpus, and the index of it written (as after any earlier command). */
const freshCopy = () => {
  for (const d of [copy, cache]) rmSync(d, { recursive: true, force: true });
  run('cp', ['-a', source, copy]);
  run('sync', []);
  run(process.execPath, spillway('list', '--json'));
};
const blobs = [copy, '-path', '*/tool-results/*', '-type', 'f'];
const runs = 3;

console.log(`\n${name}: ${sessions} Claude Code sessions x 20 blobs, a fresh copy each run (${runs} runs, medians)`);
const list = measure('find', [...blobs, '-printf', '%p %s %T@\n'], { runs, before: freshCopy });
const plan = measure(process.execPath, spillway('clean', '--max-total', '0', '--dry-run'), { env, runs, before: freshCopy });
const del = measure('find', [...blobs, '-delete'], { runs, before: freshCopy });
const clean = measure(process.execPath, spillway('clean', '--max-total', '0', '--yes'), { env, runs, before: freshCopy });
console.log(row('find -printf (the blobs)', list));
console.log(row('spillway clean --max-total 0 --dry-run', plan));
console.log(row('find -delete (the blobs)', del));
console.log(row('spillway clean --max-total 0 --yes', clean));
console.log(`ratio to find -delete: ${(clean.ms / del.ms).toFixed(2)}x; the plan alone ${(plan.ms / del.ms).toFixed(2)}x`);
rmSync(work, { recursive: true, force: true });
user.dispose();
