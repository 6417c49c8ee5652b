// Whole-process timing for the catalog benchmarks: a command from start to
// exit under /usr/bin/time (wall time and peak RSS), median of several runs.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const CLI = path.join(here, '..', 'dist', 'cli.js');
export const WALK = path.join(here, 'walk-common.mjs');
/** The walk, and every transcript line parsed: the least a cold listing does (parse-floor.mjs). */
export const PARSE_FLOOR = path.join(here, 'parse-floor.mjs');

/**
 * The environment of a user whose agent keeps its folders in `corpus`, every other default root in place
 * (an empty HOME and TMPDIR): the command timed is then what a user types, `spillway list --json` with no
 * --root, its some twenty default roots looked up as on any machine. `layout`: claude (CLAUDE_CONFIG_DIR:
 * <corpus>/projects), pi (PI_CODING_AGENT_DIR: <corpus>/sessions) or goose (TMPDIR: <corpus>).
 * `cache` is its XDG_CACHE_HOME (the index); `dispose` removes the home.
 */
export function userEnv(corpus, layout = 'claude') {
  const home = mkdtempSync(path.join(os.tmpdir(), 'bench-home-'));
  const tmp = path.join(home, 'tmp');
  mkdirSync(tmp);
  const env = { PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8', HOME: home, TMPDIR: tmp };
  for (const [name, dir] of [['XDG_CACHE_HOME', '.cache'], ['XDG_CONFIG_HOME', '.config'], ['XDG_DATA_HOME', '.local/share'], ['XDG_STATE_HOME', '.local/state']]) env[name] = path.join(home, dir);
  if (layout === 'claude') env.CLAUDE_CONFIG_DIR = corpus;
  else if (layout === 'pi') env.PI_CODING_AGENT_DIR = corpus;
  else if (layout === 'goose') env.TMPDIR = corpus;
  else throw new Error(`unknown layout ${layout}`);
  return { env, cache: env.XDG_CACHE_HOME, dispose: () => rmSync(home, { recursive: true, force: true }) };
}

/**
 * One run: wall ms (spawn to exit) and peak RSS in MB. Stdout goes to /dev/null, or with `piped` to a pipe
 * this process reads as it comes (as `| jq` would): a command that outruns its reader then holds what waits;
 * `check(stdout)` then judges what it printed.
 */
export function runOnce(command, args, { env = process.env, before, piped = false, check } = {}) {
  before?.();
  const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'bench-time-')), 'time');
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', '-o', out, command, ...args], { env, stdio: ['ignore', piped ? 'pipe' : 'ignore', 'pipe'], maxBuffer: 1 << 30 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const rssKb = Number(readFileSync(out, 'utf8').trim().split('\n').pop());
  rmSync(path.dirname(out), { recursive: true, force: true });
  if (r.status !== 0 && r.status !== 1) throw new Error(`${command} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  // A run that printed the wrong thing is no figure (a piped run's output is at hand to check).
  if (piped && check && !check(r.stdout)) throw new Error(`${command} ${args.join(' ')}: unexpected output (${r.stdout.length} bytes)`);
  return { wall, rss: rssKb / 1024 };
}

/** Median wall time and the largest peak RSS over `runs` runs. */
export function measure(command, args, options = {}) {
  return measureInTurn([{ command, args, ...options }], options.runs ?? 5)[0];
}

/**
 * measure() for several commands ({command, args, ...runOnce options}), run in turn: each round runs each
 * command once, in order. This machine's speed drifts by a third from one minute to the next; run in blocks,
 * a ratio compared one minute with another, in turn it compares the same minutes.
 */
export function measureInTurn(commands, runs = 5) {
  const walls = commands.map(() => []);
  const rss = commands.map(() => 0);
  for (let i = 0; i < runs; i++) {
    commands.forEach(({ command, args, ...options }, c) => {
      const r = runOnce(command, args, options);
      walls[c].push(r.wall);
      rss[c] = Math.max(rss[c], r.rss);
    });
  }
  return medians(walls, rss, runs);
}

/**
 * runOnce() without blocking this process's event loop, for benchmarks that serve something in-process while the
 * command runs (the counting proxy of the object-store benchmarks). `before` may be async.
 */
export async function runOnceAsync(command, args, { env = process.env, before } = {}) {
  await before?.();
  const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'bench-time-')), 'time');
  const t0 = process.hrtime.bigint();
  const child = spawn('/usr/bin/time', ['-f', '%M', '-o', out, command, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const status = await new Promise((resolve) => child.on('close', resolve));
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const rssKb = Number(readFileSync(out, 'utf8').trim().split('\n').pop());
  rmSync(path.dirname(out), { recursive: true, force: true });
  if (status !== 0 && status !== 1) throw new Error(`${command} ${args.join(' ')} exited ${status}: ${stderr}`);
  return { wall, rss: rssKb / 1024 };
}

/** measureInTurn() with runOnceAsync(). */
export async function measureInTurnAsync(commands, runs = 5) {
  const walls = commands.map(() => []);
  const rss = commands.map(() => 0);
  for (let i = 0; i < runs; i++) {
    for (const [c, { command, args, ...options }] of commands.entries()) {
      const r = await runOnceAsync(command, args, options);
      walls[c].push(r.wall);
      rss[c] = Math.max(rss[c], r.rss);
    }
  }
  return medians(walls, rss, runs);
}

function medians(walls, rss, runs) {
  return walls.map((w, c) => {
    w.sort((a, b) => a - b);
    return { ms: w[Math.floor(w.length / 2)], min: w[0], max: w.at(-1), rss: rss[c], runs };
  });
}

export function row(label, m) {
  return `${label.padEnd(44)} ${m.ms.toFixed(0).padStart(7)} ms (min ${m.min.toFixed(0)}, max ${m.max.toFixed(0)})  peak RSS ${m.rss.toFixed(0).padStart(4)} MB`;
}
