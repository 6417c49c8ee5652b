// `spillway list` and `grep` while the corpus changes under them, as it does
// while agents run: each run succeeds and prints whole JSON, and the listing
// right after the changes stop is the one a scan from nothing gives (the
// index kept nothing stale: a blob added, grown or deleted during a run, or
// between runs, shows).
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backdate, ensureBuilt, runCli } from './helpers';

const SESSIONS = 40;
const BLOBS = 5;
let dir: string;
let projects: string;

async function writeSession(i: number): Promise<void> {
  const project = path.join(projects, `-home-dev-p${i % 4}`);
  const id = `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`;
  const results = path.join(project, id, 'tool-results');
  await fsp.mkdir(results, { recursive: true });
  const lines: string[] = [];
  for (let b = 0; b < BLOBS; b++) {
    const callId = `toolu_${i}_${b}`;
    const file = path.join(results, `${callId}.txt`);
    await fsp.writeFile(file, `output ${i} ${b}\n`.repeat(10 + b));
    const timestamp = new Date(Date.UTC(2026, 0, 1, 0, i, b)).toISOString();
    lines.push(
      JSON.stringify({ type: 'assistant', sessionId: id, timestamp, message: { role: 'assistant', content: [{ type: 'tool_use', id: callId, name: 'Bash', input: { command: `make t${b}` } }] } }),
      JSON.stringify({ type: 'user', sessionId: id, timestamp, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content: `Full output saved to: ${file}` }] } }),
    );
  }
  await fsp.writeFile(path.join(project, `${id}.jsonl`), lines.join('\n') + '\n');
}

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-concurrent-'));
  projects = path.join(dir, 'projects');
  for (let i = 0; i < SESSIONS; i++) await writeSession(i);
  await backdate(projects);
  ensureBuilt();
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const env = (cache: string): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: path.join(dir, 'home'), XDG_CACHE_HOME: cache });
const list = (cache: string) => runCli(['list', '--json', '--no-default-roots', '--root', projects], env(cache));

describe('a corpus that changes while spillway runs', () => {
  it('lists and greps it whole every time, and once it stops, lists what a scan from nothing lists', async () => {
    const cache = path.join(dir, 'cache');
    const writer = spawn(process.execPath, [path.join(__dirname, 'corpus-writer.mjs'), projects], { stdio: ['ignore', 'pipe', 'inherit'] });
    let changes = '';
    writer.stdout.setEncoding('utf8').on('data', (d: string) => (changes += d));
    const exited = new Promise((resolve) => writer.on('exit', resolve));
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (let round = 0; round < 6; round++) {
        // One alone, then two at once, each against the index the run before left (or is writing).
        const runs = round % 2 === 0 ? [await list(cache)] : await Promise.all([list(cache), list(cache)]);
        for (const run of runs) {
          expect(run.stderr).toBe('');
          expect(run.code).toBe(0);
          // A session leaves the listing only once emptied (a change in 30, or its last blob deleted): far fewer than half.
          expect((JSON.parse(run.stdout) as { sessions: unknown[] }).sessions.length).toBeGreaterThanOrEqual(SESSIONS / 2);
        }
        const grep = await runCli(['grep', 'output', '--no-default-roots', '--root', projects, '--max', '100000'], env(cache));
        expect(grep.code).toBe(0);
        expect(grep.stdout.split('\n').length).toBeGreaterThan(100);
      }
    } finally {
      writer.kill();
      await exited;
    }
    expect(Number(changes)).toBeGreaterThan(50); // the corpus did change under the runs
    const warm = await list(cache);
    const cold = await list(path.join(dir, 'fresh-cache'));
    expect(cold.code).toBe(0);
    expect(warm.stdout).toBe(cold.stdout);
  }, 60_000);
});
