// grep without waiting for the catalog: ripgrep starts on the blob folders
// the index named last time while the scan runs, and what it finds is kept
// only in files the scan confirms as blobs; folders found since are searched
// after. The results are those of a scan then a grep.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { IndexReader } from '../../../src/catalog/index/index-file';
import type { GrepMatch } from '../../../src/catalog/types';

let dir: string;
beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'grep-early-'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

async function session(root: string, name: string, blobs: number): Promise<string> {
  const folder = path.join(root, name);
  await fsp.mkdir(folder, { recursive: true });
  const records: string[] = [];
  for (let i = 0; i < blobs; i++) {
    await fsp.writeFile(path.join(folder, `blob-${i}.txt`), `first line\nneedle ${name} ${i}\n`);
    records.push(JSON.stringify({ v: 1, file: `blob-${i}.txt`, sessionId: name, tool: 'Bash', toolCallId: `c${i}`, args: 'x', bytes: 30, createdAt: '2026-01-01T00:00:00.000Z' }));
  }
  await fsp.writeFile(path.join(folder, 'spillway.jsonl'), records.join('\n') + '\n');
  return folder;
}

const key = (m: GrepMatch): string => `${m.path}:${m.line}:${m.text}`;

describe('grep while the catalog loads', () => {
  it('keeps matches in blobs only, finds folders the index did not name, and agrees with scan then grep', async () => {
    const root = path.join(dir, 'root');
    const cacheDir = path.join(dir, 'cache');
    const kept = await session(root, 'session-00000000000a', 40);
    const dropped = await session(root, 'session-00000000000b', 40);
    const first = new Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
    await first.scan();
    await first.dispose();
    const indexFile = path.join(cacheDir, (await fsp.readdir(cacheDir)).find((n) => n.endsWith('.jsonl'))!);
    expect(IndexReader.blobFoldersIn(indexFile).sort()).toEqual([kept, dropped].sort());

    // Since: one folder is no session any more, a new one appeared, a hard link to a foreign file sits among blobs.
    await fsp.rm(path.join(dropped, 'spillway.jsonl'));
    const added = await session(root, 'session-00000000000c', 40);
    const foreign = path.join(dir, 'foreign.txt');
    await fsp.writeFile(foreign, 'needle outside\n');
    await fsp.link(foreign, path.join(kept, 'linked.txt'));

    for (const engine of ['rg', 'node'] as const) {
      const early = new Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
      const got: GrepMatch[] = [];
      const summary = await early.scanAndGrep({ pattern: 'needle', engine, maxResults: 10_000 }, (m) => got.push(m));
      await early.dispose();
      const plain = new Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
      await plain.scan();
      const want: GrepMatch[] = [];
      await plain.grep({ pattern: 'needle', engine, maxResults: 10_000 }, (m) => want.push(m));
      await plain.dispose();
      expect(summary.errors).toEqual([]);
      expect(got.map(key).sort()).toEqual(want.map(key).sort());
      expect(got).toHaveLength(80);
      expect(got.filter((m) => m.path.startsWith(added + path.sep))).toHaveLength(40);
      expect(got.some((m) => m.path.startsWith(dropped + path.sep) || m.path.endsWith('linked.txt'))).toBe(false);
    }
  });

  it('prints matches in unchanged sessions before the scan ends, and holds those of a session not yet described', async () => {
    const root = path.join(dir, 'vouched');
    const cacheDir = path.join(dir, 'cache-vouched');
    const same = await session(root, 'session-000000000020', 20);
    const changed = await session(root, 'session-000000000021', 20);
    // Stamps this old can be trusted (a younger mtime could hide a change within the clock's granularity).
    const old = new Date(Date.now() - 3600_000);
    for (const folder of [root, same, changed]) {
      for (const name of await fsp.readdir(folder)) await fsp.utimes(path.join(folder, name), old, old);
      await fsp.utimes(folder, old, old);
    }
    const first = new Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
    await first.scan();
    await first.dispose();
    // Since: a file added to one session folder (it is described again), none to the other.
    await fsp.writeFile(path.join(changed, 'blob-new.txt'), 'needle new\n');

    const catalog = new Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
    // Describing the changed session waits for a match: with matches printed only after the scan, this would wait forever.
    let firstMatch!: () => void;
    const matched = new Promise<void>((resolve) => (firstMatch = resolve));
    let scanEnded = false;
    const internals = catalog as unknown as { describeClaim: (claim: unknown) => Promise<unknown>; scanSessions: Catalog['scanSessions'] };
    const describe = internals.describeClaim.bind(catalog);
    internals.describeClaim = async (claim) => {
      await Promise.race([matched, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      return describe(claim);
    };
    const scanSessions = internals.scanSessions.bind(catalog);
    internals.scanSessions = async (...args) => {
      const listing = await scanSessions(...args);
      scanEnded = true;
      return listing;
    };
    const before: GrepMatch[] = [];
    const got: GrepMatch[] = [];
    await catalog.scanAndGrep({ pattern: 'needle', engine: 'rg', maxResults: 10_000 }, (m) => {
      if (!scanEnded) before.push(m);
      got.push(m);
      firstMatch();
    });
    await catalog.dispose();
    expect(before.length).toBe(20);
    expect(before.every((m) => m.path.startsWith(same + path.sep))).toBe(true);
    const plain = new Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
    await plain.scan();
    const want: GrepMatch[] = [];
    await plain.grep({ pattern: 'needle', engine: 'rg', maxResults: 10_000 }, (m) => want.push(m));
    await plain.dispose();
    expect(got.map(key).sort()).toEqual(want.map(key).sort());
    expect(got).toHaveLength(41);
  });

  it('stops at the total cap even when ripgrep ran ahead of the scan, and a bad pattern starts nothing', async () => {
    const root = path.join(dir, 'capped');
    const cacheDir = path.join(dir, 'cache-capped');
    for (let s = 0; s < 3; s++) await session(root, `session-00000000001${s}`, 30);
    const first = new Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
    await first.scan();
    await first.dispose();
    const catalog = new Catalog({ roots: [root], useDefaultRoots: false, cacheDir });
    const got: GrepMatch[] = [];
    const summary = await catalog.scanAndGrep({ pattern: 'needle', engine: 'rg', maxResults: 25 }, (m) => got.push(m));
    expect(got).toHaveLength(25);
    expect(summary.truncated).toBe(true);
    const fresh = new Catalog({ roots: [root], useDefaultRoots: false, cacheDir: path.join(dir, 'cache-unused') });
    await expect(fresh.scanAndGrep({ pattern: '(', regex: true }, () => undefined)).rejects.toThrow(/regex parse error/);
    // The scan never started: no index was written.
    await expect(fsp.readdir(path.join(dir, 'cache-unused'))).rejects.toThrow();
    await catalog.dispose();
  });
});
