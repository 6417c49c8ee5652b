// `spillway grep` as a user types it (process start to exit, every match
// printed, the corpus the agent's folder among the default roots) beside
// `rg -n -F` over the same folders, in the same run:
// 1,000 blobs x 1 MB, 100,000 small blobs, and one-line blobs of 10 / 100 /
// 400 MB (grep time must grow linearly with line length). Beside them, the
// least a Node process can do (bench/read-floor.mjs), and `node -e 0` (Node's own start, which rg does not pay).
// Goals: <= 1.25x rg at 1,000 x 1 MB, <= 2x at 100k blobs, peak RSS <= 200 MB.
// Then other layouts: pi's (its blob folders handed to rg whole) and goose's (in
// TMPDIR, so handed to rg with a glob of goose's names), 40,000 blobs each.
// `node bench/catalog-grep-cli.mjs 1m|100k|many|lines|pi|goose` runs one part; RUNS=n sets the number of rounds.
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORPUS, claudeCorpus, gooseCorpus, piCorpus } from './catalog-common.mjs';
import { CLI, measure, measureInTurn, row, userEnv } from './catalog-process-common.mjs';

const FLOOR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'read-floor.mjs');

const part = process.argv[2];
const NEEDLE = 'NEEDLE';

/** `spillway grep` as a user types it, the corpus the agent's folder among the default roots (userEnv). */
function compare(title, root, defaultRuns, searched = path.join(root, 'projects'), engines = ['rg', 'node'], layout = 'claude') {
  const runs = Number(process.env.RUNS ?? defaultRuns);
  const { env, dispose } = userEnv(root, layout);
  const grep = (engine) => [CLI, 'grep', NEEDLE, '--max', '100000000', '--engine', engine];
  measure(process.execPath, grep('rg'), { env, runs: 1 }); // the index, written once
  console.log(`\n${title} (${runs} runs in turn, medians; index warm)`);
  const [bare, rg, floor, ...byEngine] = measureInTurn([
    // Node's own start: spillway pays it and rg does not.
    { command: process.execPath, args: ['-e', '0'], env },
    // In the user's environment, as spillway runs (see catalog-list.mjs).
    { command: 'rg', args: ['-n', '-F', NEEDLE, searched], env },
    // The floor of any Node engine: read every file and count the literal, nothing more.
    { command: process.execPath, args: [FLOOR, searched, NEEDLE], env },
    ...engines.map((engine) => ({ command: process.execPath, args: grep(engine), env })),
  ], runs);
  console.log(row('node -e 0 (Node starting, nothing else)', bare) + `  ${(bare.ms / rg.ms).toFixed(2)}x rg`);
  console.log(row('rg -n -F over the folders', rg));
  console.log(row('bare Node read + indexOf (the floor)', floor) + `  ${(floor.ms / rg.ms).toFixed(2)}x rg`);
  engines.forEach((engine, i) => console.log(row(`spillway grep --engine ${engine}`, byEngine[i]) + `  ${(byEngine[i].ms / rg.ms).toFixed(2)}x rg`));
  dispose();
}

if (!part || part === '1m') compare('1,000 blobs x 1 MB in 50 sessions', await claudeCorpus('grep-1000x1m', 50, 20, 1 << 20), 5);
if (!part || part === '100k') compare('100,000 blobs x 2 KB in 5,000 sessions', await claudeCorpus('scale-100k', 5000, 20), 3);
// The same count in another shape: each of the 50,000 blob folders is opened and checked before ripgrep reads it.
if (!part || part === 'many') compare('100,000 blobs x 512 B in 50,000 sessions of 2', await claudeCorpus('shape-many100k', 50000, 2, 512), 3, undefined, ['rg']);

if (!part || part === 'pi') compare('40,000 pi blobs x 2 KB in 2,000 sessions', await piCorpus('pi-40k', 2000, 20), 3, path.join(CORPUS, 'pi-40k', 'sessions'), undefined, 'pi');
if (!part || part === 'goose') compare('40,000 goose responses x 2 KB in one folder', await gooseCorpus('goose-40k', 40000), 3, path.join(CORPUS, 'goose-40k', 'goose_mcp_responses'), undefined, 'goose');

if (!part || part === 'lines') {
  for (const mb of [10, 100, 400]) {
    const root = path.join(CORPUS, `one-line-${mb}m`);
    const blob = path.join(root, 'projects', '-p', '00000000-0000-4000-8000-00000000000a', 'tool-results', 'toolu_line.txt');
    if (!existsSync(blob)) {
      await fsp.mkdir(path.dirname(blob), { recursive: true });
      const body = Buffer.alloc(mb << 20, 'abcdefgh ');
      body.write(NEEDLE, body.length - 1000);
      body[body.length - 1] = 0x0a;
      await fsp.writeFile(blob, body);
    }
    compare(`one blob, one line of ${mb} MB`, root, 3);
  }
}
