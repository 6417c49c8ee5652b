// scanSessions(): the streaming scan `list` and `grep` use. It must list
// exactly what scan() then sessions() lists (cold, warm, after changes, with
// a fallback session that yields a blob a regular session names), share the
// index with scan(), and read each session back from the index rather than
// keep it in memory.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { sessionJson, type SessionJson } from '../../../src/catalog/index/session-json';
import type { SessionListing } from '../../../src/catalog/scan/settled';
import type { SessionInfo } from '../../../src/catalog/types';
import { buildFixtureHome, type FixtureHome } from '../../fixtures/build-home';
import { backdate, shown } from './helpers';

let dir: string;
let cacheDir: string;
let fx: FixtureHome;

/** While set, writes into files below this folder fail as on a full disk. */
const disk = vi.hoisted(() => ({ fullBelow: undefined as string | undefined }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const writeSync = ((fd: number, ...rest: unknown[]) => {
    if (disk.fullBelow && fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(disk.fullBelow)) {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }
    return (fs.writeSync as (...args: unknown[]) => number)(fd, ...rest);
  }) as typeof fs.writeSync;
  return { ...fs, default: { ...fs, writeSync }, writeSync };
});

const newCatalog = (): Catalog => new Catalog({ env: fx.env, roots: fx.userRoots, cacheDir });

async function visited(listing: SessionListing): Promise<SessionInfo[]> {
  const out: SessionInfo[] = [];
  await listing.forEach((s) => out.push(s));
  return out;
}

/** Each session's per-turn series, from the listing and from a scanned catalog: they must agree. */
async function expectSameTurns(listing: SessionListing, sessions: SessionInfo[], inMemory: Catalog): Promise<void> {
  let withCalls = 0;
  for (const session of sessions) {
    const series = await listing.turns(session);
    expect(series).toEqual(await inMemory.turnsFor(session.key));
    if (series!.points.length > 0) withCalls++;
  }
  expect(withCalls).toBeGreaterThan(0);
}

/** scanSessions() beside scan() on the same tree: the sessions, totals, grep targets and turns must agree. */
async function expectSameAsScan(): Promise<{ stats: ReturnType<Catalog['scanStats']> }> {
  const streaming = newCatalog();
  const listing = await streaming.scanSessions();
  const stats = streaming.scanStats();
  const streamed = await visited(listing);
  const printed: SessionJson[] = [];
  await listing.forEachJson((s) => printed.push(s));
  const targets = listing.grepTargets();
  expect(streaming.sessions()).toEqual([]); // nothing kept in the catalog itself
  const inMemory = newCatalog();
  await inMemory.scan();
  await expectSameTurns(listing, streamed, inMemory);
  await listing.close();
  const sessions = inMemory.sessions();
  expect(shown(streamed)).toEqual(shown(sessions));
  // What `list --json` prints: kept in the index lines, or made from the session when a blob went to another.
  expect(printed).toEqual(sessions.map((session) => sessionJson(session, session.blobs)));
  const blobs = sessions.flatMap((s) => s.blobs);
  expect(listing).toMatchObject({ sessions: sessions.length, blobs: blobs.length, bytes: blobs.reduce((n, b) => n + b.bytes, 0), skipped: inMemory.skipped() });
  const searched = [...targets.paths, ...(targets.folderFiles?.() ?? [])].sort();
  expect(searched).toEqual(blobs.map((b) => b.path).sort());
  for (const b of blobs) expect(targets.accept!(b.path)).toBe(true);
  expect(targets.accept!(path.join(fx.home, 'not-a-blob.txt'))).toBe(false);
  await inMemory.dispose();
  return { stats };
}

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-scan-sessions-'));
  fx = await buildFixtureHome(path.join(dir, 'fx'), { unattachedPi: true, lowerPriority: true });
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  cacheDir = await fsp.mkdtemp(path.join(dir, 'cache-'));
  await backdate(path.join(dir, 'fx'));
});

describe('scanSessions', () => {
  it('lists what scan() lists: cold, then warm from its own index, and scan() reuses that index whole', async () => {
    const cold = await expectSameAsScan();
    expect(cold.stats).toMatchObject({ reused: 0, indexLoaded: false });
    expect(cold.stats.described).toBeGreaterThan(5);
    const warm = await expectSameAsScan();
    expect(warm.stats).toMatchObject({ described: 0, transcriptBytes: 0, indexLoaded: true });
    // The index the streaming scan wrote is whole: the in-memory scan describes nothing.
    const inMemory = newCatalog();
    await inMemory.scan();
    expect(inMemory.scanStats().described).toBe(0);
    await inMemory.dispose();
  });

  it('keeps a blob with the regular session that names it, not the fallback session listing the same folder', async () => {
    await expectSameAsScan();
    const listing = await newCatalog().scanSessions();
    const owners = (await visited(listing)).filter((s) => s.blobs.some((b) => b.path === fx.pi.bashLog));
    await listing.close();
    expect(owners.map((s) => s.id)).toEqual([fx.pi.sessionId]);
  });

  it('after a blob is added, grown and deleted and a session removed, lists what scan() lists, re-describing only what changed', async () => {
    await expectSameAsScan();
    const { grep, json, mcp } = fx.claude.blobs;
    await fsp.writeFile(path.join(path.dirname(grep), 'toolu_added.txt'), 'added\n');
    await fsp.appendFile(json, 'grown\n');
    await fsp.rm(mcp);
    await fsp.rm(fx.gemini.dir, { recursive: true });
    const after = await expectSameAsScan();
    expect(after.stats.described).toBeGreaterThan(0);
    expect(after.stats.reused).toBeGreaterThan(0);
  });

  it('lists the same from memory, and says why, when the index cannot be written', async () => {
    const blocker = path.join(dir, 'a-file');
    await fsp.writeFile(blocker, 'not a folder');
    const warnings: string[] = [];
    const unwritable = new Catalog({ env: fx.env, roots: fx.userRoots, cacheDir: path.join(blocker, 'spillway'), logger: { warn: (m) => warnings.push(m) } });
    const listing = await unwritable.scanSessions();
    const listed = await visited(listing);
    const inMemory = newCatalog();
    await inMemory.scan();
    await expectSameTurns(listing, listed, inMemory);
    await listing.close();
    expect(shown(listed)).toEqual(shown(inMemory.sessions()));
    expect(warnings.join('\n')).toMatch(/cannot write the catalog index/);
    await inMemory.dispose();
    await unwritable.dispose();
  });

  it('on a full disk, lists the same from memory and says why; an index already in place is still used', async () => {
    const warnings: string[] = [];
    const catalog = (): Catalog => new Catalog({ env: fx.env, roots: fx.userRoots, cacheDir, logger: { warn: (m) => warnings.push(m) } });
    const inMemory = newCatalog();
    await inMemory.scan();
    const want = shown(inMemory.sessions());
    await inMemory.dispose();
    await fsp.rm(cacheDir, { recursive: true, force: true });
    disk.fullBelow = cacheDir;
    try {
      const full = catalog();
      const listing = await full.scanSessions();
      expect(shown(await visited(listing))).toEqual(want);
      await listing.close();
      // Said once, among the problems the CLI prints.
      expect(full.problems().filter((p) => /cannot write the catalog index .*ENOSPC/.test(p))).toHaveLength(1);
      expect((await fsp.readdir(cacheDir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    } finally {
      disk.fullBelow = undefined;
    }
    // With an index written, and the disk full again: nothing changed, so nothing is written and the index is used.
    await expectSameAsScan();
    disk.fullBelow = cacheDir;
    warnings.length = 0;
    try {
      const warm = catalog();
      const listing = await warm.scanSessions();
      expect(shown(await visited(listing))).toEqual(want);
      await listing.close();
      expect(warm.scanStats()).toMatchObject({ described: 0, indexLoaded: true });
      expect(warnings).toEqual([]);
    } finally {
      disk.fullBelow = undefined;
    }
  });

  it('prints a session from its description when the listing its line keeps is not that session\'s', async () => {
    await expectSameAsScan(); // an index to reuse
    const file = path.join(cacheDir, (await fsp.readdir(cacheDir)).find((n) => n.endsWith('.jsonl'))!);
    const text = await fsp.readFile(file, 'utf8');
    // The listing kept after the first line's tab names another key, at the same length (the trailer still holds).
    const tab = text.indexOf('\t');
    const keyAt = text.indexOf('{"key":"', tab) + 8;
    const edited = text.slice(0, keyAt) + (text[keyAt] === 'x' ? 'y' : 'x') + text.slice(keyAt + 1);
    await fsp.writeFile(file, edited);
    const { stats } = await expectSameAsScan();
    expect(stats).toMatchObject({ described: 0, indexLoaded: true });
  });

  it('does not trust a line whose description names other blobs than its checked part, and rebuilds the index', async () => {
    await expectSameAsScan(); // an index to reuse
    const file = path.join(cacheDir, (await fsp.readdir(cacheDir)).find((n) => n.endsWith('.jsonl'))!);
    const lines = (await fsp.readFile(file, 'utf8')).split('\n');
    // In the description of the first line that names a blob, the blob's name edited (same length: the trailer holds).
    const at = lines.findIndex((l) => l.includes('"rows":[[0,"'));
    const first = lines[at]!.indexOf('\t');
    const name = lines[at]!.indexOf('"rows":[[0,"', first) + '"rows":[[0,"'.length;
    lines[at] = lines[at]!.slice(0, name) + (lines[at]![name] === 'x' ? 'y' : 'x') + lines[at]!.slice(name + 1);
    await fsp.writeFile(file, lines.join('\n'));
    const listing = await newCatalog().scanSessions();
    await expect(visited(listing)).rejects.toThrow(/catalog index does not hold together .* run the command again/);
    await listing.close();
    expect((await fsp.readdir(cacheDir)).filter((n) => n.endsWith('.jsonl'))).toEqual([]);
    const again = await expectSameAsScan();
    expect(again.stats.reused).toBe(0);
  });

  it('reads each session from the index when it is visited, not from memory', async () => {
    await expectSameAsScan(); // an index to reuse
    const listing = await newCatalog().scanSessions();
    expect(listing.sessions).toBeGreaterThan(2);
    const file = (await fsp.readdir(cacheDir)).find((n) => n.endsWith('.jsonl'))!;
    // Cut the index under the open listing: what it has not read yet is gone.
    await fsp.truncate(path.join(cacheDir, file), 10);
    await expect(visited(listing)).rejects.toThrow(/index/);
    await listing.close();
    // A later scan finds the cut file corrupt and rebuilds it.
    const again = await expectSameAsScan();
    expect(again.stats.reused).toBe(0);
  });
});
