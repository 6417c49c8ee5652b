// Describing sessions on two threads when there is no index (describe-ahead.ts): a worker takes sessions from the
// last one back while the scan goes from the first. What the scan lists, and the index it writes, must be exactly
// what one thread lists and writes, whichever thread described a session, and when the worker cannot start or
// stops half way.
import * as esbuild from 'esbuild';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { worthAWorker } from '../../../src/catalog/scan/describe-ahead';
import type { SessionInfo } from '../../../src/catalog/types';
import { backdate, REPO, shown } from './helpers';

const SESSIONS = 60;

/** While set, writes into files below `below` fail as on a full disk once `bytes` more have been written there. */
const disk = vi.hoisted(() => ({ full: undefined as { below: string; bytes: number } | undefined }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const writeSync = ((fd: number, data: string | NodeJS.ArrayBufferView, ...rest: unknown[]) => {
    if (disk.full && fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(disk.full.below)) {
      disk.full.bytes -= typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
      if (disk.full.bytes < 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }
    return (fs.writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;
  return { ...fs, default: { ...fs, writeSync }, writeSync };
});
let dir: string;
let root: string;
let workerFile: string;

type ScanOptions = Parameters<Catalog['scanSessions']>[0];

async function listed(cacheDir: string | undefined, options: ScanOptions): Promise<{ sessions: SessionInfo[]; stats: ReturnType<Catalog['scanStats']>; problems: string[] }> {
  const catalog = new Catalog({ env: { HOME: dir }, useDefaultRoots: false, roots: [root], cacheDir });
  const listing = await catalog.scanSessions(options);
  const sessions: SessionInfo[] = [];
  await listing.forEach((s) => sessions.push(s));
  await listing.close();
  return { sessions: shown(sessions) as SessionInfo[], stats: catalog.scanStats(), problems: catalog.problems() };
}

/** A Claude Code session: its blobs, and a transcript naming each, padded to 1 MB (each session takes the scan a while). */
async function writeSession(i: number): Promise<void> {
  const id = `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`;
  const project = path.join(root, 'projects', `-home-dev-p${i % 7}`);
  const results = path.join(project, id, 'tool-results');
  await fsp.mkdir(results, { recursive: true });
  const lines: string[] = [];
  for (let b = 0; b < 3; b++) {
    const callId = `toolu_${i}_${b}`;
    const file = path.join(results, `${callId}.txt`);
    await fsp.writeFile(file, `output ${i} ${b}\n`.repeat(20 + b));
    const timestamp = new Date(Date.UTC(2026, 0, 1, 0, i, b)).toISOString();
    lines.push(
      JSON.stringify({ type: 'assistant', sessionId: id, cwd: `/home/dev/p${i}`, timestamp, message: { role: 'assistant', content: [{ type: 'tool_use', id: callId, name: b === 0 ? 'Bash' : 'Read', input: { command: `make t${b}` } }], usage: { input_tokens: 10, output_tokens: 5 } } }),
      JSON.stringify({ type: 'user', sessionId: id, timestamp, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content: `Full output saved to: ${file}` }] } }),
    );
  }
  // Replies between the calls, each parsed whole (it holds the turn's usage).
  const said = JSON.stringify({ type: 'assistant', sessionId: id, message: { role: 'assistant', content: [{ type: 'text', text: 'x'.repeat(500) }], usage: { input_tokens: 10, output_tokens: 5 } } });
  for (let n = 0; n < 2000; n++) lines.push(said);
  // A torn last line: counted as skipped by whichever thread reads it.
  if (i % 20 === 3) lines.push('{"type":"assistant","mess');
  await fsp.writeFile(path.join(project, `${id}.jsonl`), lines.join('\n') + '\n');
}

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-describe-ahead-'));
  root = path.join(dir, 'claude');
  workerFile = path.join(dir, 'describe-ahead-worker.js');
  await esbuild.build({ entryPoints: [path.join(REPO, 'src/catalog/scan/describe-ahead-worker.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: workerFile, logLevel: 'silent' });
  for (let i = 0; i < SESSIONS; i++) await writeSession(i);
  await backdate(root);
}, 60_000);
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('describing sessions ahead in a worker thread', () => {
  it('lists what one thread lists, and writes an index the next scan reuses whole', async () => {
    const one = await listed(undefined, {});
    expect(one.sessions).toHaveLength(SESSIONS);
    expect(one.sessions.reduce((n, s) => n + s.skipped, 0)).toBe(3);

    const cache = path.join(dir, 'cache-two');
    // Started once the scan knows its pace (after its first sessions), the worker takes the last ones meanwhile.
    const two = await listed(cache, { describeAhead: { workerFile, minMs: 1 } });
    expect(two.stats).toMatchObject({ described: SESSIONS, reused: 0 });
    expect(two.stats.describedAhead).toBeGreaterThan(0);
    expect(two.sessions).toEqual(one.sessions);

    // The lines the worker wrote hold: nothing is described again, and the same is listed.
    const warm = await listed(cache, { checkAhead: false, describeAhead: { workerFile, minMs: 0 } });
    expect(warm.stats).toMatchObject({ described: 0, reused: SESSIONS, describedAhead: 0 });
    expect(warm.sessions).toEqual(one.sessions);

    // Started while the walk goes on (at once here), the worker takes sessions from the first one described, whatever
    // the pace would have judged.
    const early = await listed(path.join(dir, 'cache-early'), { describeAhead: { workerFile, walkMs: 0, minMs: 1e9 } });
    expect(early.stats).toMatchObject({ described: SESSIONS, reused: 0 });
    expect(early.stats.describedAhead).toBeGreaterThan(0);
    expect(early.sessions).toEqual(one.sessions);
    expect((await listed(path.join(dir, 'cache-early'), { checkAhead: false })).stats).toMatchObject({ described: 0, reused: SESSIONS });
    // Without it, that pace never asks for one.
    expect((await listed(path.join(dir, 'cache-late'), { describeAhead: { workerFile, walkMs: 1e9, minMs: 1e9 } })).stats.describedAhead).toBe(0);

    // A change in a session the worker described is seen like any other.
    const last = path.join(root, 'projects', `-home-dev-p${(SESSIONS - 1) % 7}`, `${String(SESSIONS - 1).padStart(8, '0')}-0000-4000-8000-000000000000`, 'tool-results', `toolu_${SESSIONS - 1}_1.txt`);
    await fsp.appendFile(last, 'grown in place\n');
    const grown = await listed(cache, { checkAhead: false });
    expect(grown.stats).toMatchObject({ described: 1 });
    expect(grown.sessions).toEqual((await listed(undefined, {})).sessions);
    await backdate(root);
  });

  it('lists the same when the worker cannot start, or stops half way', async () => {
    const truth = (await listed(undefined, {})).sessions;
    const missing = await listed(path.join(dir, 'cache-missing'), { describeAhead: { workerFile: path.join(dir, 'no-such-worker.js'), minMs: 0 } });
    expect(missing.stats).toMatchObject({ described: SESSIONS, describedAhead: 0 });
    expect(missing.sessions).toEqual(truth);

    // A worker that ends itself after its first sessions: what it took and did not hand back is described here.
    const dying = path.join(dir, 'dying-worker.js');
    await fsp.writeFile(dying, `setTimeout(() => process.exit(1), 30);\nrequire(${JSON.stringify(workerFile)});\n`);
    // Started during the walk, it may end before or after it has its job.
    for (const [name, options] of [['dying', { minMs: 0 }], ['dying-early', { walkMs: 0 }]] as const) {
      const cache = path.join(dir, `cache-${name}`);
      const stopped = await listed(cache, { describeAhead: { workerFile: dying, ...options } });
      expect(stopped.stats, name).toMatchObject({ described: SESSIONS });
      expect(stopped.sessions, name).toEqual(truth);
      expect((await listed(cache, {})).stats, name).toMatchObject({ described: 0, reused: SESSIONS });
    }
    const missingEarly = await listed(path.join(dir, 'cache-missing-early'), { describeAhead: { workerFile: path.join(dir, 'no-such-worker.js'), walkMs: 0 } });
    expect(missingEarly.stats).toMatchObject({ described: SESSIONS, describedAhead: 0 });
    expect(missingEarly.sessions).toEqual(truth);
  });
});

describe('a disk that fills while the worker hands lines over', () => {
  it('lists the same from memory, says why once, and leaves no temporary file', async () => {
    const truth = (await listed(undefined, {})).sessions;
    // The disk fills at the start, after some lines, and after most of them (each session's line is some 1 KB).
    for (const bytes of [0, 8_000, 40_000]) {
      const cache = path.join(dir, `cache-full-${bytes}`);
      disk.full = { below: cache, bytes };
      try {
        const full = await listed(cache, { describeAhead: { workerFile, minMs: 0 } });
        expect(full.sessions, `full after ${bytes} bytes`).toEqual(truth);
        expect(full.problems.filter((p) => /cannot write the catalog index .*ENOSPC/.test(p))).toHaveLength(1);
        expect(await fsp.readdir(cache)).toEqual([]);
      } finally {
        disk.full = undefined;
      }
    }
  });
});

describe('when a worker is worth it', () => {
  it('judges by how long the sessions left would take at the pace so far, once that pace is known', () => {
    expect(worthAWorker(100, 500, 100, 800)).toBe(false); // 400 more at 1 ms: 0.4 s
    expect(worthAWorker(100, 5000, 100, 800)).toBe(true); // 4.9 s
    expect(worthAWorker(5, 5000, 20, 800)).toBe(false); // too early to judge a pace
    expect(worthAWorker(1, 2, 500, 800)).toBe(false); // one left: nothing to share
    expect(worthAWorker(0, 2, 0, 0)).toBe(true);
  });
});
