// The Node engine's second thread (src/catalog/grep/grep-ahead.ts): a worker that
// searches the files from the last one back finds what one thread finds,
// keeps the caps, reads below the roots as the main thread does, and a worker
// that stops leaves its files to the main thread.
import * as esbuild from 'esbuild';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grep } from '../../../src/catalog/grep/grep';
import { RootedReads } from '../../../src/catalog/read/rooted-read';
import type { GrepMatch, GrepOptions, GrepSummary } from '../../../src/catalog/types';
import { REPO } from './helpers';

let dir: string;
let root: string;
let workerFile: string;
let paths: string[];
const FILES = 24;

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-grep-ahead-'));
  root = path.join(dir, 'root');
  workerFile = path.join(dir, 'grep-ahead-worker.js');
  await esbuild.build({ entryPoints: [path.join(REPO, 'src/catalog/grep/grep-ahead-worker.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: workerFile, logLevel: 'silent' });
  paths = [];
  for (let i = 0; i < FILES; i++) {
    const folder = path.join(root, `session-${i}`, 'tool-results');
    await fsp.mkdir(folder, { recursive: true });
    const file = path.join(folder, `toolu_${i}.txt`);
    // Lines over several 2 MB reads in some files, so that matches cross the worker's chunks too.
    const filler = i % 5 === 0 ? `filler line ${i}\n`.repeat(300_000) : '';
    await fsp.writeFile(file, `first NEEDLE of ${i}\r\n${filler}Über NEEDLE ${i}\nplain\nNEEDLE NEEDLE twice ${i}\nlast NEEDLE without newline`);
    paths.push(file);
  }
  // Odd files among the worker's: a byte-order mark, a NUL past 64 KiB, invalid UTF-8, an empty file.
  await fsp.writeFile(paths[FILES - 2]!, `\ufeffNEEDLE at the start\n${'NEEDLE filler\n'.repeat(8000)}binary \0 NEEDLE\nNEEDLE after\n`);
  await fsp.writeFile(paths[FILES - 3]!, Buffer.concat([Buffer.alloc(300, 0xff), Buffer.from('\nrow \xff NEEDLE here\n', 'latin1')]));
  await fsp.writeFile(paths[FILES - 4]!, '');
  // A file gone since it was listed: an error, from either thread.
  paths.push(path.join(root, 'session-gone', 'toolu_gone.txt'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

interface Searched {
  matches: string[];
  summary: GrepSummary;
  /** Files the progress counted done (the worker's) while the main thread waited on its first match's reader. */
  doneMeanwhile: number;
}

/**
 * A Node search of `paths`. With `gate`, the reader of the first match holds the main thread until the worker, the
 * only one searching meanwhile, has reported a file (a reader that is behind then holds the worker too), or 10 s
 * have passed; with a number, that many ms.
 */
async function search(options: Partial<GrepOptions>, gate: boolean | number = false, files = paths): Promise<Searched> {
  const matches: GrepMatch[] = [];
  let filesDone = 0;
  let opened: () => void = () => undefined;
  const reported = new Promise<void>((resolve) => (opened = resolve));
  let doneMeanwhile = -1;
  const summary = await grep(
    { pattern: 'NEEDLE', engine: 'node', maxResults: 1_000_000, paths: files, reads: new RootedReads([root]), ...options },
    (m) => {
      matches.push(m);
      if (!gate || matches.length > 1) return undefined;
      const waited = typeof gate === 'number' ? new Promise((resolve) => setTimeout(resolve, gate)) : Promise.race([reported, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      return waited.then(() => void (doneMeanwhile = filesDone));
    },
    undefined,
    (p) => {
      filesDone = p.filesDone;
      if (filesDone >= 1) opened();
    },
  );
  if (!summary.truncated) expect(filesDone).toBe(files.length);
  return { matches: matches.map((m) => `${m.path}:${m.line}:${m.text}`).sort(), summary, doneMeanwhile };
}

const errorsOf = (s: GrepSummary): string[] => s.errors.map((e) => e.path).sort();

describe('grep with a worker searching from the last file back', () => {
  it('finds what one thread finds, in the files the worker searched', async () => {
    for (const pattern of ['NEEDLE', 'Über NEEDLE', 'row \ufffd NEEDLE']) {
      const one = await search({ pattern, searchAhead: false });
      const two = await search({ pattern, searchAhead: { workerFile, minBytes: 0 } }, true);
      // The worker searched while the main thread waited on its first file's first match.
      if (pattern === 'NEEDLE') expect(two.doneMeanwhile).toBeGreaterThanOrEqual(1);
      expect(two.matches).toEqual(one.matches);
      expect(errorsOf(two.summary)).toEqual(errorsOf(one.summary));
      expect(errorsOf(two.summary)).toEqual([paths.at(-1)]);
    }
  });

  it('keeps the total and per-blob caps', async () => {
    const two = await search({ maxResults: 7, searchAhead: { workerFile, minBytes: 0 } }, true);
    expect(two.matches).toHaveLength(7);
    expect(two.summary).toMatchObject({ matches: 7, truncated: true });
    const one = await search({ maxPerBlob: 2, searchAhead: false });
    const capped = await search({ maxPerBlob: 2, searchAhead: { workerFile, minBytes: 0 } }, true);
    expect(capped.matches).toEqual(one.matches);
    expect([...capped.summary.cappedBlobs!].sort()).toEqual([...one.summary.cappedBlobs!].sort());
  });

  it('ends, cancelled, when cancelled while the worker searches', async () => {
    const controller = new AbortController();
    let seen = 0;
    const summary = await grep(
      { pattern: 'NEEDLE', engine: 'node', maxResults: 1_000_000, paths, reads: new RootedReads([root]), searchAhead: { workerFile, minBytes: 0 } },
      // The first match's reader is behind for 300 ms while the worker searches, then the search is cancelled.
      () => (++seen === 1 ? new Promise((resolve) => setTimeout(resolve, 300)).then(() => controller.abort()) : undefined),
      controller.signal,
    );
    expect(summary.cancelled).toBe(true);
    expect(seen).toBeGreaterThan(0);
  });

  it('refuses a file whose folder was swapped for a symlink out of the root, as the main thread does', async () => {
    const outside = path.join(dir, 'outside');
    await fsp.mkdir(outside, { recursive: true });
    await fsp.writeFile(path.join(outside, 'toolu_moved.txt'), 'SECRET NEEDLE\n');
    const linked = path.join(root, 'session-linked');
    await fsp.mkdir(linked, { recursive: true });
    await fsp.symlink(outside, path.join(linked, 'tool-results'));
    const files = [...paths.slice(0, -1), path.join(linked, 'tool-results', 'toolu_moved.txt')];
    try {
      for (const searchAhead of [false, { workerFile, minBytes: 0 }] as const) {
        const searched = await search({ searchAhead }, searchAhead !== false, files);
        expect(searched.matches.filter((m) => m.includes('SECRET'))).toEqual([]);
        expect(errorsOf(searched.summary)).toEqual([files.at(-1)]);
      }
    } finally {
      await fsp.rm(linked, { recursive: true, force: true });
    }
  });

  it('searches itself what a worker took and never reported, and what a worker that cannot start would have', async () => {
    const one = await search({ searchAhead: false });
    // A worker that takes the last three files, then ends without a word (the main thread held meanwhile).
    const quitter = path.join(dir, 'quitter.js');
    const taken = path.join(dir, 'taken');
    await fsp.writeFile(quitter, `const { workerData } = require('node:worker_threads');
const state = new Int32Array(workerData.state);
let taken = 0;
for (let at = workerData.count - 1; at >= workerData.count - 3; at--) taken += Atomics.compareExchange(state, at, 0, 1) === 0 ? 1 : 0;
require('node:fs').writeFileSync(${JSON.stringify(taken)}, String(taken));
`);
    const left = await search({ searchAhead: { workerFile: quitter, minBytes: 0 } }, 1000);
    expect(await fsp.readFile(taken, 'utf8')).toBe('3');
    expect(left.matches).toEqual(one.matches);
    expect(errorsOf(left.summary)).toEqual(errorsOf(one.summary));
    expect((await search({ searchAhead: { workerFile: path.join(dir, 'missing.js'), minBytes: 0 } })).matches).toEqual(one.matches);
  });
});
