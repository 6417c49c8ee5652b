// Checking a large index's sessions on two threads (blob-check.ts): a worker
// takes lines from the last one back while the scan goes from the first. What
// the scan lists must be exactly what a scan on one thread lists, whichever
// thread judged a changed session; the worker must judge nothing of a file
// that is not the index the scan opened.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobCheck, checkLinesFromTheEnd } from '../../../src/catalog/scan/blob-check';
import { Catalog } from '../../../src/catalog/catalog';
import { IndexReader } from '../../../src/catalog/index/index-file';
import type { SessionInfo } from '../../../src/catalog/types';
import { backdate, REPO, shown } from './helpers';

const SESSIONS = 400;
let dir: string;
let root: string;
let cacheDir: string;
let workerFile: string;
const blobsOf: string[][] = [];

const options = (): ConstructorParameters<typeof Catalog>[0] => ({ env: { HOME: dir }, useDefaultRoots: false, roots: [root], cacheDir });

async function listed(checkAhead: Parameters<Catalog['scanSessions']>[0]): Promise<{ sessions: SessionInfo[]; stats: ReturnType<Catalog['scanStats']> }> {
  const catalog = new Catalog(options());
  const listing = await catalog.scanSessions(checkAhead);
  const sessions: SessionInfo[] = [];
  await listing.forEach((s) => sessions.push(s));
  await listing.close();
  return { sessions, stats: catalog.scanStats() };
}

/** What one thread lists, with no index at all. */
async function truth(): Promise<unknown> {
  const catalog = new Catalog({ ...options(), cacheDir: undefined });
  await catalog.scan();
  await catalog.dispose();
  return shown(catalog.sessions());
}

async function indexFile(): Promise<string> {
  const names = (await fsp.readdir(cacheDir)).filter((n) => n.endsWith('.jsonl'));
  expect(names).toHaveLength(1);
  return path.join(cacheDir, names[0]!);
}

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-blob-check-'));
  root = path.join(dir, 'claude');
  cacheDir = path.join(dir, 'cache');
  // The worker as the build makes it, from these sources.
  workerFile = path.join(dir, 'blob-check-worker.js');
  await esbuild.build({ entryPoints: [path.join(REPO, 'src/catalog/scan/blob-check-worker.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: workerFile, logLevel: 'silent' });
  for (let i = 0; i < SESSIONS; i++) {
    const folder = path.join(root, 'projects', '-p', `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`, 'tool-results');
    await fsp.mkdir(folder, { recursive: true });
    blobsOf.push([]);
    for (let j = 0; j < 3; j++) {
      const blob = path.join(folder, `toolu_${i}_${j}.txt`);
      await fsp.writeFile(blob, `output ${i} ${j}\n`.repeat(10));
      blobsOf[i]!.push(blob);
    }
  }
  await backdate(root);
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('checking blobs ahead in a worker thread', () => {
  it('lists what one thread lists, for changes at the first, middle and last lines, and a worker that cannot start', async () => {
    const cold = await listed({ checkAhead: { workerFile, minBytes: 0 } });
    expect(cold.stats).toMatchObject({ described: SESSIONS, checkedAhead: 0 });

    // Nothing changed: every session is reused, the worker judged some of them.
    const warm = await listed({ checkAhead: { workerFile, minBytes: 0 } });
    expect(warm.stats).toMatchObject({ described: 0, reused: SESSIONS });
    expect(warm.stats.checkedAhead).toBeGreaterThan(0);
    expect(shown(warm.sessions)).toEqual(await truth());

    // A blob grown in place (no folder changes) in the first, a middle and the last session; one rewritten
    // with the same size; one deleted and one added (their folders change).
    for (const i of [0, SESSIONS >> 1, SESSIONS - 1]) await fsp.appendFile(blobsOf[i]![1]!, 'grown in place\n');
    const same = blobsOf[7]![0]!;
    await fsp.writeFile(same, (await fsp.readFile(same, 'utf8')).toUpperCase());
    await fsp.rm(blobsOf[SESSIONS - 5]![2]!);
    await fsp.writeFile(path.join(path.dirname(blobsOf[SESSIONS - 9]![0]!), 'toolu_new.txt'), 'new\n');
    const changed = await listed({ checkAhead: { workerFile, minBytes: 0 } });
    expect(changed.stats).toMatchObject({ described: 6, reused: SESSIONS - 6 });
    expect(shown(changed.sessions)).toEqual(await truth());
    const last = changed.sessions.find((s) => s.dir === path.dirname(path.dirname(blobsOf[SESSIONS - 1]![1]!)))!;
    expect(last.blobs.find((b) => b.path === blobsOf[SESSIONS - 1]![1])!.bytes).toBe((await fsp.stat(blobsOf[SESSIONS - 1]![1]!)).size);

    await backdate(root);
    await fsp.appendFile(blobsOf[SESSIONS - 2]![0]!, 'grown again\n');
    const noWorker = await listed({ checkAhead: { workerFile: path.join(dir, 'missing-worker.js'), minBytes: 0 } });
    expect(noWorker.stats).toMatchObject({ checkedAhead: 0 });
    expect(noWorker.stats.described).toBeGreaterThanOrEqual(1); // the grown session (and those the backdate touched)
    expect(shown(noWorker.sessions)).toEqual(await truth());
  });

  it("checks the index the extension has just shown on two threads too: scan() shows what one thread shows", async () => {
    await backdate(root);
    await listed({ checkAhead: false }); // an index of the backdated tree
    for (const i of [0, SESSIONS - 3]) await fsp.appendFile(blobsOf[i]![1]!, 'grown before the window opened\n');
    const catalog = new Catalog(options());
    expect(await catalog.showIndexed()).toBe(true);
    await catalog.scan({ checkAhead: { workerFile, minBytes: 0 } });
    expect(catalog.scanStats()).toMatchObject({ described: 2, reused: SESSIONS - 2 });
    expect(catalog.scanStats().checkedAhead).toBeGreaterThan(0);
    expect(shown(catalog.sessions())).toEqual(await truth());
    await catalog.dispose();

    // scan() reading the index itself (the one the scan above saved), with a blob grown in the middle: the same
    // answer. (Whether the worker gets a line before the scan has taken them all is a race: not asserted here.)
    await fsp.appendFile(blobsOf[SESSIONS >> 1]![2]!, 'grown again\n');
    const again = new Catalog(options());
    await again.scan({ checkAhead: { workerFile, minBytes: 0 } });
    expect(again.scanStats()).toMatchObject({ indexLoaded: true });
    expect(again.scanStats().described).toBeGreaterThanOrEqual(1);
    expect(shown(again.sessions())).toEqual(await truth());
    await again.dispose();
  });

  it("judges each line the way the scan would, and nothing of a file that is not the scan's index or is a symlink", async () => {
    await backdate(root);
    await listed({ checkAhead: false }); // an index of the backdated tree
    await fsp.appendFile(blobsOf[3]![2]!, 'grown\n');
    await fsp.rm(blobsOf[SESSIONS - 1]![0]!);
    const reader = IndexReader.open(await indexFile())!;
    const spans = reader.lineSpans();
    const judge = (ino: number, file = spans.file): Int32Array => {
      const state = new SharedArrayBuffer(4 * spans.offsets.length);
      checkLinesFromTheEnd({ ...spans, file, ino, state });
      return new Int32Array(state);
    };
    const verdicts = judge(spans.ino);
    const changedLines = reader.claims.flatMap((claim, i) => (verdicts[i] === 4 ? [path.basename(claim.dir).slice(0, 8)] : []));
    expect(changedLines.sort()).toEqual([String(3).padStart(8, '0'), String(SESSIONS - 1).padStart(8, '0')]);
    expect([...verdicts].filter((v) => v === 3)).toHaveLength(SESSIONS - 2);
    // Another file at that path (the index renamed over meanwhile): no line is taken.
    expect([...judge(spans.ino + 1)].every((v) => v === 0)).toBe(true);
    // A symlink to the very index put at its path: never followed, so no line is taken either.
    const link = path.join(dir, 'linked-index.jsonl');
    await fsp.symlink(spans.file, link);
    expect([...judge(spans.ino, link)].every((v) => v === 0)).toBe(true);
    await fsp.rm(link);
    reader.close();
  });

  it('starts no worker for an index of one line, which it could not share', async () => {
    const spans = { file: await indexFile(), dev: 0, ino: 0 };
    expect(BlobCheck.start({ ...spans, offsets: [0], lengths: [100] }, workerFile, 0)).toBeUndefined();
    const two = BlobCheck.start({ ...spans, offsets: [0, 50], lengths: [50, 50] }, workerFile, 0);
    expect(two).toBeDefined();
    await two!.stop();
  });
});

describe('a worker slower to start than the walk', () => {
  it('keeps the process alive until the scan has its answer (a process with nothing else to wait on)', async () => {
    // Another process (in this one, the test runner keeps the event loop alive): the library from these sources,
    // and a worker that takes half a second before it starts.
    const child = path.join(dir, 'child.js');
    await esbuild.build({
      stdin: {
        contents: `import { Catalog } from './src/catalog/catalog';
          const [root, cacheDir, workerFile] = process.argv.slice(2);
          void (async () => {
            const catalog = new Catalog({ env: { HOME: cacheDir }, useDefaultRoots: false, roots: [root], cacheDir });
            const listing = await catalog.scanSessions({ checkAhead: { workerFile, minBytes: 0 } });
            console.log(JSON.stringify({ sessions: listing.sessions, ...catalog.scanStats() }));
            await listing.close();
          })();`,
        resolveDir: REPO,
        loader: 'ts',
      },
      bundle: true, platform: 'node', format: 'cjs', outfile: child, logLevel: 'silent',
    });
    const slowWorker = path.join(dir, 'slow-worker.js');
    await fsp.writeFile(slowWorker, `const until = Date.now() + 500; while (Date.now() < until);\nrequire(${JSON.stringify(workerFile)});\n`);
    await listed({ checkAhead: false }); // an index to check
    const { stdout, status } = spawnSync(process.execPath, [child, root, cacheDir, slowWorker], { encoding: 'utf8' });
    expect(status).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ sessions: SESSIONS, indexLoaded: true });
  });
});
