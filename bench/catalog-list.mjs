// `spillway list --json` as a user types it (process start to exit, the
// corpus the agent's folder among the default roots: userEnv) on Claude
// Code corpora of 10k / 50k / 100k blobs, cold (no index) and warm (index
// present, nothing changed; then with its output piped, as to `jq`), beside a
// node readdirSync+lstatSync walk and `find -printf` of the same tree, and that walk with
// every transcript line JSON.parse'd (parse-floor.mjs: what a cold listing costs that parses every
// line whole; Spillway passes over bookkeeping lines and skips output repeated in them), in the same run,
// each round running each command once (measureInTurn); `node -e 0` beside them, Node's own start, the floor of both.
// Goals: cold <= 2x the walk, warm <= 1x, peak RSS <= 200 MB at 100k.
// `node bench/catalog-list.mjs 100k` runs one size (10k, 50k, 100k, 10k-25, 100k-40, 100k-10, wide, many, many100k, one100k,
// pi40k, pi-one16k, real10k, fixtures600); RUNS=n sets the number of rounds.
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { claudeCorpus, claudeFixtureCopies, claudeRealCorpus, piCorpus } from './catalog-common.mjs';
import { CLI, PARSE_FLOOR, WALK, measureInTurn, row, userEnv } from './catalog-process-common.mjs';

// [name, corpus, sessions, blobs per session, blob bytes, runs, layout]: the
// scale series, then other shapes (10 sessions of 10,000 blobs; 25,000 and
// 50,000 sessions of 2; one session of 100,000), where memory follows the
// largest session or the number of sessions rather than the number of blobs;
// then pi's layout, whose blobs only the transcript names (one session of
// 16,000 such blobs took 20 s before its lookup by call id was a map); then
// transcripts as Claude Code writes them (about 69 KB per blob: each spilled
// result's output again in `toolUseResult`), where a cold listing is mostly parsing; then 600 copies of the real
// sessions in test/fixtures, whose transcripts are half attachment lines (Claude Code writes their type after their body).
const sizes = [
  ['10k', 'scale-10k', 500, 20, 2048, 9],
  ['50k', 'scale-50k', 2500, 20, 2048, 3],
  ['100k', 'scale-100k', 5000, 20, 2048, 7],
  // The same sizes in other proportions (real sessions do not each hold 20 blobs).
  ['10k-25', 'scale-400x25', 400, 25, 4096, 7],
  ['100k-40', 'scale-2500x40', 2500, 40, 1024, 5],
  ['100k-10', 'scale-10000x10', 10000, 10, 2048, 5],
  ['wide', 'shape-wide', 10, 10000, 512, 3],
  ['many', 'shape-many', 25000, 2, 512, 3],
  ['many100k', 'shape-many100k', 50000, 2, 512, 3],
  ['one100k', 'shape-one100k', 1, 100000, 256, 3],
  ['pi40k', 'pi-40k', 2000, 20, 2048, 3, 'pi'],
  ['pi-one16k', 'pi-one16k', 1, 16000, 2048, 3, 'pi'],
  ['real10k', 'real-10k', 500, 20, 2048, 3, 'claude-real'],
  ['fixtures600', 'claude-fixtures-600', 600, 2, 0, 5, 'claude-fixtures'],
].filter(([name]) => !process.argv[2] || process.argv[2] === name);

for (const [name, corpus, sessions, perSession, blobBytes, defaultRuns, layout = 'claude'] of sizes) {
  const runs = Number(process.env.RUNS ?? defaultRuns);
  const root = await { pi: piCorpus, claude: claudeCorpus, 'claude-real': claudeRealCorpus, 'claude-fixtures': claudeFixtureCopies }[layout](corpus, sessions, perSession, blobBytes);
  // What a user types: the agent's folders are the corpus, found as default roots beside the others.
  const { env, cache, dispose } = userEnv(root, layout === 'pi' ? 'pi' : 'claude');
  const args = [CLI, 'list', '--json'];
  const dropIndex = () => rmSync(path.join(cache, 'spillway'), { recursive: true, force: true });
  const transcript = { 'claude-real': 'full-size ', 'claude-fixtures': 'real (copied from test/fixtures) ' }[layout] ?? '';
  console.log(`\n${name}: ${sessions} ${layout === 'pi' ? 'pi' : 'Claude Code'} sessions x ${perSession} blobs, one ${transcript}transcript each (${runs} runs in turn, medians)`);
  // Every session listed, to the closing brace: a run that ends early is an error, not a fast figure.
  const check = (out) => JSON.parse(out.toString('utf8')).sessions.length === sessions;
  const [bare, walk, find, floor, cold, warm, piped] = measureInTurn([
    // Node's own start, the floor of any Node command (the walk and spillway both pay it).
    { command: process.execPath, args: ['-e', '0'], env },
    // The alternatives in the user's environment too: one inherited from here could cost a Node start more or less
    // (NODE_EXTRA_CA_CERTS, set on some machines, takes 30 ms to load).
    { command: process.execPath, args: [WALK, root], env },
    { command: 'find', args: [root, '-printf', '%p %s %T@\n'], env },
    { command: process.execPath, args: [PARSE_FLOOR, root], env },
    { command: process.execPath, args, env, before: dropIndex },
    { command: process.execPath, args, env }, // the index the cold run just wrote, nothing changed
    { command: process.execPath, args, env, piped: true, check },
  ], runs);
  console.log(row('node -e 0 (Node starting, nothing else)', bare));
  console.log(row('node readdirSync+lstatSync walk', walk));
  console.log(row('find -printf', find));
  console.log(row('walk + JSON.parse every transcript line', floor));
  console.log(row('spillway list --json, cold (no index)', cold));
  console.log(row('spillway list --json, warm (index, no change)', warm));
  console.log(row('the same, stdout a pipe read as it comes', piped));
  console.log(`ratio to the walk: cold ${(cold.ms / walk.ms).toFixed(2)}x (goal <= 2x; a Node process that parses every line: ${(floor.ms / walk.ms).toFixed(2)}x), warm ${(warm.ms / walk.ms).toFixed(2)}x (goal <= 1x); less Node's start: cold ${((cold.ms - bare.ms) / (walk.ms - bare.ms)).toFixed(2)}x, warm ${((warm.ms - bare.ms) / (walk.ms - bare.ms)).toFixed(2)}x`);
  dispose();
}
