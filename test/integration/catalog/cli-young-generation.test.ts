// The CLI keeps V8's young generation at its first size (src/cli/v8-defaults.ts), also after a worker thread
// has started (V8 raises the growth factor again as it sets up the worker's heap); the library, loaded by anyone
// else, changes nothing.
// Seen from inside the real process: on exit, a preload fills the young generation and reports its size.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt } from './helpers';

let dir: string;
beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(path.join(os.tmpdir(), 'spillway-young-'));
  writeFileSync(
    path.join(dir, 'young.js'),
    `process.on('exit', () => {
      const keep = [];
      for (let i = 0; i < 300000; i++) keep.push({ i, s: 'x' + i });
      const young = require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
      require('node:fs').writeFileSync(process.env.YOUNG_OUT, String(young.space_size / 1048576));
    });\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** MB of the young generation once 300,000 objects have survived in it, after `args` ran. */
function youngAfter(args: string[]): { mb: number; status: number | null; stdout: string; stderr: string } {
  const out = path.join(dir, 'out.txt');
  const home = mkdtempSync(path.join(dir, 'home-'));
  const env = { PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), YOUNG_OUT: out };
  // One real spill to list and search.
  const spill = spawnSync(process.execPath, [CLI, 'spill', '--session', 's', '--tool', 'Bash', '--root', path.join(home, 'blobs'), '--max-inline', '64'], { env, input: 'abc\n'.repeat(100) });
  expect(spill.status).toBe(0);
  const run = spawnSync(process.execPath, ['--require', path.join(dir, 'young.js'), ...args.map((a) => a.replace('ROOT', path.join(home, 'blobs')))], { env, encoding: 'utf8' });
  return { mb: Number(readFileSync(out, 'utf8')), status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("the CLI's young generation", () => {
  it('stays at its first size in `list`', () => {
    const run = youngAfter([CLI, 'list', '--json', '--no-default-roots', '--root', 'ROOT']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('"tool":"Bash"');
    expect(run.mb).toBeLessThanOrEqual(2);
  });

  it('stays at its first size after a worker thread started (a regex in the Node engine runs in one)', () => {
    const run = youngAfter([CLI, 'grep', 'a.c', '--regex', '--engine', 'node', '--no-default-roots', '--root', 'ROOT']);
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(run.stdout).toContain(':1:abc');
    expect(run.mb).toBeLessThanOrEqual(2);
  });

  it('is left as V8 has it where the library is loaded by another program', () => {
    const run = youngAfter(['-e', `require(${JSON.stringify(path.join(path.dirname(CLI), 'index.js'))})`]);
    expect(run.status).toBe(0);
    expect(run.mb).toBeGreaterThan(2);
  });
});
