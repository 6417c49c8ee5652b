// `list`, `grep` and `show` wait for a slower reader: a session, a match or
// a piece of a blob is written only once standard output has caught up.
// Without that, output piped to a slow reader (`| jq`, `| less`) queued in
// memory: all 50 MB of a listing of 100,000 blobs, every match grep found,
// a whole blob.
import { mkdtempSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import { noInput, type CliIO } from '../../../src/cli/io';

const SESSIONS = 40;
const LINES = 2000; // matching lines per blob: 80,000 in all, megabytes of output
const BIG_BYTES = 8 << 20;
const LISTED = 400; // sessions whose listing is several pieces of output (64 K characters each)
let home: string;
let big: string;
let many: string;

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'spillway-slow-reader-'));
  for (let s = 0; s < SESSIONS; s++) {
    const id = `${String(s).padStart(8, '0')}-0000-4000-8000-000000000000`;
    const results = path.join(home, 'projects', '-p', id, 'tool-results');
    await fsp.mkdir(results, { recursive: true });
    const body = Array.from({ length: LINES }, (_, i) => `ERROR ${i} in session ${s}: connection reset\n`).join('');
    await fsp.writeFile(path.join(results, `toolu_${s}.txt`), body);
  }
  // A large blob for show (a second blob of the first session), with no line grep looks for.
  big = path.join(home, 'projects', '-p', '00000000-0000-4000-8000-000000000000', 'tool-results', 'toolu_big.txt');
  await fsp.writeFile(big, Buffer.alloc(BIG_BYTES, 'yyyyyyy\n'));
  many = path.join(home, 'many');
  for (let s = 0; s < LISTED; s++) {
    const results = path.join(many, 'projects', '-p', `${String(s).padStart(8, '0')}-0000-4000-8000-000000000001`, 'tool-results');
    await fsp.mkdir(results, { recursive: true });
    await fsp.writeFile(path.join(results, `toolu_${s}.txt`), `output ${s}\n`);
  }
});
afterAll(() => fsp.rm(home, { recursive: true, force: true }));

/** An in-process IO whose reader is always behind: each wait ends only when `release()` is called. */
function slowReader(): { io: CliIO; written: () => string; writes: () => number; release: () => void } {
  let out = '';
  let writes = 0;
  let waiting: Array<() => void> = [];
  const io: CliIO = {
    stdout: (text) => {
      out += String(text);
      writes++;
    },
    stderr: () => undefined,
    stdin: noInput,
    env: { HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), PATH: process.env.PATH },
    caughtUp: () => new Promise<void>((resolve) => waiting.push(resolve)),
  };
  const release = (): void => {
    const now = waiting;
    waiting = [];
    for (const resolve of now) resolve();
  };
  return { io, written: () => out, writes: () => writes, release };
}

const tick = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs a command against a reader that never catches up by itself: it must stop writing, then finish once released. */
async function runAgainstSlowReader(argv: string[], root = home): Promise<string> {
  const reader = slowReader();
  let done = false;
  const run = main([...argv, '--no-default-roots', '--root', root], reader.io).finally(() => (done = true));
  for (let i = 0; i < 500 && reader.writes() < 1; i++) await tick(10);
  await tick(200);
  const before = reader.writes();
  expect(before).toBeGreaterThanOrEqual(1);
  await tick(200);
  expect(reader.writes()).toBe(before); // waiting for the reader
  expect(done).toBe(false);
  while (!done) {
    reader.release();
    await new Promise((r) => setImmediate(r));
  }
  expect(await run).toBe(0);
  return reader.written();
}

describe('a slow reader', () => {
  it('list --json: nothing more is written until the reader catches up', async () => {
    const out = await runAgainstSlowReader(['list', '--json'], many);
    expect((JSON.parse(out) as { sessions: unknown[] }).sessions).toHaveLength(LISTED);
  });

  it('list: the same for the table', async () => {
    expect(await runAgainstSlowReader(['list'], many)).toContain(`${LISTED} session(s), ${LISTED} blob(s)`);
  });

  for (const argv of [['list', '--json'], ['list']]) {
    it(`${argv.join(' ')} writes many sessions at a time, not one write each`, async () => {
      const writes: string[] = [];
      const io: CliIO = { ...slowReader().io, stdout: (text) => void writes.push(String(text)), caughtUp: () => undefined };
      expect(await main([...argv, '--no-default-roots', '--root', many], io)).toBe(0);
      expect([...writes.join('').matchAll(/toolu_\d+\.txt/g)]).toHaveLength(LISTED);
      // A write per 64 K characters (and the last), where there was one per session.
      expect(writes.length).toBeLessThanOrEqual(Math.ceil(writes.join('').length / (64 * 1024)) + 1);
    });
  }

  it('show: the blob is read no further until the reader catches up', async () => {
    const out = await runAgainstSlowReader(['show', big]);
    expect(out.length).toBe(BIG_BYTES);
    expect(out).toBe('yyyyyyy\n'.repeat(BIG_BYTES / 8));
  });

  it('show --lines: a slice of MBs goes out a piece at a time, each once the reader has caught up', async () => {
    const lines = BIG_BYTES / 8 - 1;
    const out = await runAgainstSlowReader(['show', big, '--lines', `2:${lines + 1}`]);
    expect(out).toBe('yyyyyyy\n'.repeat(lines));
  });

  for (const engine of ['rg', 'node']) {
    it(`grep --engine ${engine}: the search pauses until the reader catches up, then prints every match`, async () => {
      const out = await runAgainstSlowReader(['grep', 'ERROR', '--max', String(SESSIONS * LINES), '--engine', engine]);
      const lines = out.split('\n').filter(Boolean);
      expect(lines).toHaveLength(SESSIONS * LINES);
      expect(new Set(lines).size).toBe(SESSIONS * LINES);
    });

    it(`grep --json --engine ${engine}: the same, each match written as it is found`, async () => {
      const out = await runAgainstSlowReader(['grep', 'ERROR', '--json', '--max', String(SESSIONS * LINES), '--engine', engine]);
      const { matches, truncated } = JSON.parse(out) as { matches: Array<{ path: string; line: number }>; truncated: boolean };
      expect(truncated).toBe(false);
      expect(new Set(matches.map((m) => `${m.path}:${m.line}`)).size).toBe(SESSIONS * LINES);
    });
  }
});

describe('one session of thousands of blobs', () => {
  const BLOBS = 3000;
  const names = Array.from({ length: BLOBS }, (_, b) => `toolu_${String(b).padStart(5, '0')}.txt`);
  let wide: string;
  beforeAll(async () => {
    wide = mkdtempSync(path.join(os.tmpdir(), 'spillway-wide-session-'));
    const results = path.join(wide, 'projects', '-p', '00000000-0000-4000-8000-0000000000aa', 'tool-results');
    await fsp.mkdir(results, { recursive: true });
    for (const name of names) await fsp.writeFile(path.join(results, name), `output of ${name}\n`);
  });
  afterAll(() => fsp.rm(wide, { recursive: true, force: true }));

  /** Runs a command, keeping each write and counting the waits for the reader. */
  async function run(argv: string[]): Promise<{ out: string; writes: string[]; waits: number }> {
    const writes: string[] = [];
    let waits = 0;
    const io: CliIO = {
      stdout: (text) => void writes.push(String(text)),
      stderr: () => undefined,
      stdin: noInput,
      env: { HOME: wide, XDG_CACHE_HOME: path.join(wide, '.cache'), PATH: process.env.PATH },
      caughtUp: async () => void waits++,
    };
    expect(await main([...argv, '--no-default-roots', '--root', wide], io)).toBe(0);
    return { out: writes.join(''), writes, waits };
  }

  const listedNames = (out: string): string[] => [...out.matchAll(/toolu_\d{5}\.txt/g)].map((m) => m[0]).sort();

  for (const argv of [['list', '--json'], ['list'], ['clean', '--max-total', '0', '--dry-run']]) {
    it(`${argv.join(' ')} writes it in pieces, waiting for the reader between them, not as one string`, async () => {
      const { out, writes, waits } = await run(argv);
      if (argv.includes('--json')) {
        const sessions = (JSON.parse(out) as { sessions: Array<{ blobs: Array<{ path: string }> }> }).sessions;
        expect(sessions).toHaveLength(1);
        expect(sessions[0]!.blobs.map((b) => path.basename(b.path)).sort()).toEqual(names);
      } else {
        expect(listedNames(out)).toEqual(names); // each blob on one row
      }
      expect(out.length).toBeGreaterThan(4 * 64 * 1024);
      // Each piece holds at most 64 K characters and the one row that crossed it.
      expect(Math.max(...writes.map((w) => w.length))).toBeLessThan(64 * 1024 + 1024);
      expect(waits).toBeGreaterThanOrEqual(Math.floor(out.length / (64 * 1024)));
    });
  }

  for (const engine of ['rg', 'node']) {
    it(`grep --engine ${engine} writes many matches at a time, though they come one blob at a time`, async () => {
      const { out, writes } = await run(['grep', 'output of', '--max', String(BLOBS), '--engine', engine]);
      expect([...out.matchAll(/:1:output of (toolu_\d{5}\.txt)$/gm)].map((m) => m[1]).sort()).toEqual(names);
      // One write per match was 3,000 writes (a system call each, outside tests).
      expect(writes.length).toBeLessThan(BLOBS / 10);
    });
  }
});
