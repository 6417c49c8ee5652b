// A `spillway list` killed while it writes the index (Ctrl-C during a first scan, an out-of-memory kill) leaves its
// temporary index behind, tens of MB at 100,000 blobs, one per interrupted run. The next run removes it once its
// writer is gone (and a minute has passed: see removeLeftovers).
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backdate, CLI, ensureBuilt, runCli } from './helpers';

const SESSIONS = 1500;
let dir: string;
let root: string;
let env: NodeJS.ProcessEnv;
let cache: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'interrupted-index-'));
  root = path.join(dir, 'claude');
  cache = path.join(dir, 'cache', 'spillway');
  env = { PATH: process.env.PATH, HOME: dir, XDG_CACHE_HOME: path.join(dir, 'cache') };
  for (let i = 0; i < SESSIONS; i++) {
    const folder = path.join(root, 'projects', '-p', `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`, 'tool-results');
    await fsp.mkdir(folder, { recursive: true });
    for (let j = 0; j < 2; j++) await fsp.writeFile(path.join(folder, `toolu_${i}_${j}.txt`), `output ${i} ${j}\n`.repeat(10));
  }
  await backdate(root);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const temps = async (): Promise<string[]> => (await fsp.readdir(cache).catch(() => [] as string[])).filter((n) => n.endsWith('.tmp'));

describe('an index write that did not finish', () => {
  it('leaves a temporary file that the next run removes', async () => {
    const args = ['list', '--json', '--no-default-roots', '--root', root];
    // Killed as soon as its temporary index is there, in the middle of describing 1,500 sessions.
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: 'ignore' });
    const ended = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    let exited = false;
    void ended.then(() => (exited = true));
    while (!exited && (await temps()).length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    child.kill('SIGKILL');
    expect(await ended, 'the run ended before it could be interrupted').toBe('SIGKILL');
    const left = await temps();
    expect(left).toHaveLength(1);

    // A minute later (its writer long gone), the next run lists everything and removes it.
    const minuteAgo = new Date(Date.now() - 2 * 60_000);
    await fsp.utimes(path.join(cache, left[0]!), minuteAgo, minuteAgo);
    const run = await runCli(args, env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).sessions).toHaveLength(SESSIONS);
    expect(await temps()).toEqual([]);
    expect((await fsp.readdir(cache)).filter((n) => n.endsWith('.jsonl'))).toHaveLength(1);
  });
});
