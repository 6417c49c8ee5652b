// Whole-process timing for the catalog benchmarks: a command from start to
// exit under /usr/bin/time (wall time and peak RSS), median of several runs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const CLI = path.join(here, '..', 'dist', 'cli.js');
export const WALK = path.join(here, 'walk-common.mjs');
/** The walk, and every transcript line parsed: the least a cold listing does (parse-floor.mjs). */
export const PARSE_FLOOR = path.join(here, 'parse-floor.mjs');

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
  const runs = options.runs ?? 5;
  const walls = [];
  let rss = 0;
  for (let i = 0; i < runs; i++) {
    const r = runOnce(command, args, options);
    walls.push(r.wall);
    rss = Math.max(rss, r.rss);
  }
  walls.sort((a, b) => a - b);
  return { ms: walls[Math.floor(walls.length / 2)], min: walls[0], max: walls.at(-1), rss, runs };
}

export function row(label, m) {
  return `${label.padEnd(44)} ${m.ms.toFixed(0).padStart(7)} ms (min ${m.min.toFixed(0)}, max ${m.max.toFixed(0)})  peak RSS ${m.rss.toFixed(0).padStart(4)} MB`;
}
