// What one redraw of the Spills tree costs at 100k blobs (5,000 Claude Code
// sessions x 20 blobs), in-process, after the catalog is loaded: the rows
// VS Code asks for (the agent row, then every session row) as tree.ts draws
// them, beside the obvious alternative on the same catalog in the same run:
// each session row drawn from its blobs, listed (filtered and sorted) as an
// opened row lists them. With no filter and with one (`tool:bash`). Every
// batch of live changes redraws the tree, so this is paid per batch.
// `node bench/extension-tree-model.mjs` (after `npm run build`).
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { claudeCorpus, fmt, lib, ms, now } from './catalog-common.mjs';

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
// The tree model is TypeScript without vscode: bundled for this script.
const bundle = path.join(repo, '.cache', 'bench', 'tree-model.cjs');
buildSync({ entryPoints: [path.join(repo, 'src', 'extension', 'treeModel.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: bundle, logLevel: 'error' });
const { agentDescription, buildTree, sessionChildren, sessionRow } = createRequire(import.meta.url)(bundle);

const corpus = await claudeCorpus('scale-100k', 5000, 20);
const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'bench-cache-'));
const catalog = new lib.Catalog({ roots: [corpus], useDefaultRoots: false, cacheDir });
await catalog.scan();
const sessions = catalog.sessions();
const at = Date.now();

/** The rows of one redraw; `listed`: each row from its blobs, listed as an opened row lists them. */
function redraw(filter, listed) {
  let rows = 0;
  for (const agent of buildTree(sessions, filter, 'time')) {
    const nodes = listed ? agent.sessions.map(({ session }) => rowFromBlobs(session, sessionChildren(session, filter, 'time'))) : agent.sessions;
    agentDescription(nodes);
    for (const node of nodes) {
      sessionRow(node, at);
      rows++;
    }
  }
  return rows;
}

/** A session's row counted from its listed blobs. */
function rowFromBlobs(session, blobs) {
  return { kind: 'session', session, shown: { count: blobs.length, bytes: blobs.reduce((n, b) => n + b.bytes, 0) } };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => {
  const t = now();
  const rows = fn();
  return { ms: ms(now() - t), rows };
};
console.log(`100k blobs: ${sessions.length} sessions, one redraw of the Spills tree in-process (median of 7, interleaved)`);
for (const [label, filter] of [['no filter', {}], ['filter tool:bash', { tool: 'bash' }]]) {
  const counted = [];
  const listed = [];
  let rows = 0;
  for (let i = 0; i < 7; i++) {
    const a = time(() => redraw(filter, false));
    const b = time(() => redraw(filter, true));
    counted.push(a.ms);
    listed.push(b.ms);
    rows = a.rows;
    if (a.rows !== b.rows) throw new Error(`rows differ: ${a.rows} against ${b.rows}`);
  }
  console.log(`${label.padEnd(17)} rows from counts ${fmt(median(counted), 0).padStart(4)} ms   rows from listed blobs ${fmt(median(listed), 0).padStart(4)} ms   (${rows} session rows)`);
}
await catalog.dispose();
rmSync(cacheDir, { recursive: true, force: true });
