// The persistent index: a second scan takes unchanged sessions from it
// without reading their transcripts, sees every blob added, grown or deleted
// since, and survives a corrupt file, another version and several processes.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { INDEX_VERSION } from '../../../src/catalog/index/index-file';
import { buildFixtureHome, type FixtureHome } from '../../fixtures/build-home';
import { backdate, ensureBuilt, runCli, shown } from './helpers';

let dir: string;
let cacheDir: string;
let fx: FixtureHome;

async function scanned(statBlobs = true): Promise<Catalog> {
  const catalog = new Catalog({ env: fx.env, roots: fx.userRoots, cacheDir });
  await catalog.scan({ statBlobs });
  await catalog.dispose();
  return catalog;
}

async function indexFile(): Promise<string> {
  const names = (await fsp.readdir(cacheDir)).filter((n) => n.startsWith('catalog-') && n.endsWith('.jsonl'));
  expect(names).toHaveLength(1);
  return path.join(cacheDir, names[0]!);
}

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-index-'));
  fx = await buildFixtureHome(path.join(dir, 'fx'));
  ensureBuilt();
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  cacheDir = await fsp.mkdtemp(path.join(dir, 'cache-'));
  await backdate(path.join(dir, 'fx'));
});

describe('persistent index', () => {
  it('a warm scan describes nothing, reads no transcript, and shows what a cold scan shows', async () => {
    const cold = await scanned();
    expect(cold.scanStats()).toMatchObject({ indexLoaded: false, reused: 0 });
    expect(cold.scanStats().described).toBe(cold.sessions().length + 1); // + the fallback pi claim that lists nothing
    expect(cold.scanStats().transcriptBytes).toBeGreaterThan(0);
    const warm = await scanned();
    expect(warm.scanStats()).toMatchObject({ indexLoaded: true, described: 0, transcriptBytes: 0 });
    expect(warm.scanStats().reused).toBe(cold.scanStats().described);
    expect(shown(warm.sessions())).toEqual(shown(cold.sessions()));
    // turns still work: the calls are read again for that one session.
    const key = warm.findSessions(fx.claude.sessionId)[0]!.key;
    const fresh = new Catalog({ env: fx.env, roots: fx.userRoots, cacheDir });
    await fresh.scan();
    expect((await fresh.turnsFor(key))).toEqual(await cold.turnsFor(key));
    await fresh.dispose();
  });

  it('shows a blob added, grown or deleted since, re-describing only its session', async () => {
    const cold = await scanned();
    const claims = cold.scanStats().described;
    const added = path.join(fx.claude.toolResults, 'toolu_01AddedAAAAAAAAAAAAAAAAA.txt');
    await fsp.writeFile(added, 'new blob\n');
    await fsp.appendFile(fx.spillway.blob, 'grown by a line\n');
    const grownBytes = (await fsp.stat(fx.spillway.blob)).size;
    await fsp.rm(fx.gemini.blob);
    const warm = await scanned();
    expect(warm.blob(added)).toMatchObject({ bytes: 9 });
    expect(warm.blob(fx.spillway.blob)!.bytes).toBe(grownBytes);
    expect(warm.blob(fx.gemini.blob)).toBeUndefined();
    const stats = warm.scanStats();
    expect(stats.described).toBe(3);
    expect(stats.reused).toBe(claims - 3);
    // Once the files are old enough to trust their stamps, and nothing changes, nothing is described.
    await backdate(path.join(dir, 'fx'));
    const settled = await scanned();
    const again = await scanned();
    expect(again.scanStats().described).toBe(0);
    expect(shown(again.sessions())).toEqual(shown(settled.sessions()));
    await fsp.rm(added);
  });

  it('shows the index unchecked at once, then the scan corrects it with one full event and keeps what held', async () => {
    const gone = path.join(fx.claude.toolResults, 'toolu_01GoneCCCCCCCCCCCCCCCCCC.txt');
    await fsp.writeFile(gone, 'to be deleted\n');
    const cold = await scanned();
    const added = path.join(fx.claude.toolResults, 'toolu_01ShownBBBBBBBBBBBBBBBBB.txt');
    await fsp.writeFile(added, 'new blob\n');
    await fsp.rm(gone);
    const catalog = new Catalog({ env: fx.env, roots: fx.userRoots, cacheDir });
    const events: Array<{ full: boolean }> = [];
    catalog.onDidChange((e) => events.push(e));
    expect(await catalog.showIndexed()).toBe(true);
    // As the index stored it: the deleted blob still listed, the new one not yet.
    expect(shown(catalog.sessions())).toEqual(shown(cold.sessions()));
    expect(catalog.blob(gone)).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toEqual([expect.objectContaining({ full: true })]);
    const unchanged = catalog.sessions().find((s) => s.key !== catalog.blob(gone)!.sessionKey)!.blobs[0]!;
    const shownObject = catalog.blob(unchanged.path);
    await catalog.scan();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toHaveLength(2);
    expect(catalog.scanStats()).toMatchObject({ indexLoaded: true, described: 1 }); // only the changed session
    expect(catalog.blob(added)).toMatchObject({ bytes: 9 });
    expect(catalog.blob(gone)).toBeUndefined();
    // A session that held was not rebuilt: the tree's objects stay the same.
    expect(catalog.blob(unchanged.path)).toBe(shownObject);
    const fresh = await scanned();
    expect(shown(catalog.sessions())).toEqual(shown(fresh.sessions()));
    await catalog.dispose();
    await fsp.rm(added);
  });

  it('of many sessions, shows the newest first: while the first scan goes on, and from a large index before reading the rest', async () => {
    const root = path.join(dir, 'many-sessions');
    const count = 260;
    const blobs: string[] = [];
    for (let i = 0; i < count; i++) {
      const toolResults = path.join(root, 'projects', '-p', `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`, 'tool-results');
      await fsp.mkdir(toolResults, { recursive: true });
      blobs.push(path.join(toolResults, `toolu_${i}.txt`));
      await fsp.writeFile(blobs[i]!, `output ${i}\n`);
    }
    await backdate(root, 2 * 86_400);
    // Updates in an order unlike the folders' names (and so the index lines'); each blob's folder changed when it was written.
    const base = Date.now() / 1000 - 86_400;
    for (const [i, blob] of blobs.entries()) {
      const when = base + ((i * 37) % count) * 60;
      await fsp.utimes(blob, when, when);
      await fsp.utimes(path.dirname(blob), when, when);
    }
    const options = { env: fx.env, useDefaultRoots: false, roots: [root], cacheDir };
    // With no index, the scan announces the 200 most recently changed sessions before it goes on with the rest.
    const cold = new Catalog(options);
    const early: string[][] = [];
    cold.onDidChange((e) => e.full && early.push(cold.sessions().map((s) => s.key)));
    await cold.scan();
    await cold.dispose();
    expect(early.length).toBeGreaterThanOrEqual(1);
    const newest = cold.sessions().slice(0, 200).map((s) => s.key);
    expect(early[0]).toEqual(newest);

    const catalog = new Catalog(options);
    expect(await catalog.showIndexed()).toBe(true);
    expect(new Set(catalog.sessions().map((s) => s.key))).toEqual(new Set(newest));
    await catalog.scan();
    expect(catalog.sessions().map((s) => s.key)).toEqual(cold.sessions().map((s) => s.key));
    expect(catalog.scanStats()).toMatchObject({ indexLoaded: true, described: 0 });
    await catalog.dispose();

    // An index written before the trailer recorded updates, then one session changed: the index `list`
    // writes gives every session its last update, not only the one described again.
    const file = await indexFile();
    const lines = (await fsp.readFile(file, 'utf8')).split('\n');
    const trailer = JSON.parse(lines[lines.length - 2]!) as Record<string, unknown>;
    delete trailer.updated;
    lines[lines.length - 2] = JSON.stringify(trailer);
    await fsp.writeFile(file, lines.join('\n'));
    await fsp.writeFile(path.join(path.dirname(blobs[0]!), 'toolu_later.txt'), 'later\n');
    const listing = await new Catalog(options).scanSessions();
    const listed: string[] = [];
    await listing.forEach((s) => listed.push(s.key));
    await listing.close();
    const upgraded = new Catalog(options);
    expect(await upgraded.showIndexed()).toBe(true);
    expect(new Set(upgraded.sessions().map((s) => s.key))).toEqual(new Set(listed.slice(0, 200)));
    await upgraded.dispose();
    await fsp.rm(root, { recursive: true });
  });

  it('shows nothing from a missing index, and the scan fills the catalog', async () => {
    const catalog = new Catalog({ env: fx.env, roots: fx.userRoots, cacheDir });
    expect(await catalog.showIndexed()).toBe(false);
    expect(catalog.sessions()).toEqual([]);
    await catalog.scan();
    expect(catalog.sessions().length).toBeGreaterThan(0);
    await catalog.dispose();
  });

  it('lists again only folders that changed, and still finds a new session folder and a new sub-folder', async () => {
    const cold = await scanned();
    const listedCold = cold.scanStats().foldersListed;
    await backdate(path.join(dir, 'fx'));
    const settled = await scanned(); // the stamps are old enough now: this index can be trusted
    const warm = await scanned();
    expect(warm.scanStats().foldersListed).toBe(0);
    expect(shown(warm.sessions())).toEqual(shown(settled.sessions()));
    // A new Claude Code session (its project folder changes) and a new sub-folder in an existing one (its claim changes).
    const project = path.dirname(fx.claude.sessionDir);
    const uuid = '00000000-0000-4000-8000-00000000beef';
    await fsp.mkdir(path.join(project, uuid, 'tool-results'), { recursive: true });
    await fsp.writeFile(path.join(project, uuid, 'tool-results', 'toolu_01NewSessionDDDDDDDDDDD.txt'), 'new session blob\n');
    await fsp.writeFile(path.join(project, `${uuid}.jsonl`), JSON.stringify({ type: 'user', sessionId: uuid, cwd: '/w', message: { content: 'hi' } }) + '\n');
    // A folder of Spillway blobs next to tool-results/ (a manifest makes it one).
    const extra = path.join(fx.claude.sessionDir, 'spillway-extra');
    await fsp.mkdir(extra);
    await fsp.writeFile(path.join(extra, 'extra.txt'), 'extra blob\n');
    const record = { v: 1, file: 'extra.txt', sessionId: fx.claude.sessionId, tool: 'Bash', toolCallId: 'x1', args: 'x', bytes: 11, createdAt: '2026-03-01T10:00:00.000Z' };
    await fsp.writeFile(path.join(extra, 'spillway.jsonl'), JSON.stringify(record) + '\n');
    const after = await scanned();
    expect(after.scanStats().foldersListed).toBeGreaterThan(0);
    expect(after.scanStats().foldersListed).toBeLessThan(listedCold);
    expect(after.findSessions(uuid)).toHaveLength(1);
    const claude = after.findSessions(fx.claude.sessionId)[0]!;
    expect(claude.blobs.map((b) => b.path)).toContain(path.join(extra, 'extra.txt'));
    await fsp.rm(path.join(project, uuid), { recursive: true });
    await fsp.rm(path.join(project, `${uuid}.jsonl`));
    await fsp.rm(extra, { recursive: true });
    const removed = await scanned();
    expect(removed.findSessions(uuid)).toHaveLength(0);
    expect(removed.findSessions(fx.claude.sessionId)[0]!.blobs.map((b) => b.path)).not.toContain(path.join(extra, 'extra.txt'));
  });

  it('reads a subagents/ folder that appears after a scan, and a manifest written into tool-results/ since', async () => {
    // subagents/ is read only when the walk found it (no probe for it): it must still be found once it appears.
    const subagents = path.join(fx.claude.sessionDir, 'subagents');
    const aside = path.join(dir, 'subagents-aside');
    await fsp.rename(subagents, aside);
    try {
      const before = await scanned();
      expect(before.blob(fx.claude.blobs.subagent)).toMatchObject({ tool: undefined, attribution: 'none' });
      await fsp.rename(aside, subagents);
      // tool-results/' manifest is looked for in its listing (no lstat): one written since is read.
      const spilled = path.join(fx.claude.toolResults, 'spilled-by-hook.txt');
      await fsp.writeFile(spilled, 'x\n');
      const record = { v: 1, file: path.basename(spilled), sessionId: fx.claude.sessionId, tool: 'ManifestTool', toolCallId: 'm1', args: 'a', bytes: 2, createdAt: '2026-03-01T10:00:00.000Z' };
      await fsp.writeFile(path.join(fx.claude.toolResults, 'spillway.jsonl'), JSON.stringify(record) + '\n');
      const after = await scanned();
      expect(after.blob(fx.claude.blobs.subagent)).toMatchObject({ tool: 'Glob', attribution: 'transcript' });
      expect(after.blob(spilled)).toMatchObject({ tool: 'ManifestTool', attribution: 'manifest' });
      const skipped = (c: Catalog): number => c.findSessions(fx.claude.sessionId)[0]!.skipped;
      expect(skipped(after)).toBe(skipped(before));
    } finally {
      await fsp.rm(path.join(fx.claude.toolResults, 'spillway.jsonl'), { force: true });
      await fsp.rm(path.join(fx.claude.toolResults, 'spilled-by-hook.txt'), { force: true });
      await fsp.rename(aside, subagents).catch(() => undefined);
    }
  });

  it('re-reads a transcript that changed, and only that one', async () => {
    const cold = await scanned();
    const skipped = cold.findSessions(fx.claude.sessionId)[0]!.skipped;
    // (The fixture ends in a torn line: the first '\n' completes it.)
    await fsp.appendFile(fx.claude.transcript, '\na line that is not JSON\n');
    const warm = await scanned();
    expect(warm.scanStats().described).toBe(1);
    expect(warm.scanStats().transcriptBytes).toBeGreaterThan(0);
    expect(warm.findSessions(fx.claude.sessionId)[0]!.skipped).toBe(skipped + 1);
  });

  it.each([
    ['gemini', 'read_file_call9.txt'],
    ['opencode', 'tool_01JQTESTMANIFEST'],
  ] as const)('re-reads a %s folder whose Spillway manifest gained a record (no folder stamp changes)', async (agent, name) => {
    const folder = fx[agent].dir;
    const blob = path.join(folder, name);
    const manifest = path.join(folder, 'spillway.jsonl');
    await fsp.writeFile(blob, 'output\n'.repeat(1000));
    await fsp.writeFile(manifest, JSON.stringify({ v: 1, file: 'elsewhere.txt', tool: 'Seed', sessionId: 's0' }) + '\n');
    await backdate(folder);
    const cold = await scanned();
    expect(cold.blob(blob)).toBeDefined();
    expect(cold.blob(blob)!.tool).not.toBe('Grep');
    await fsp.appendFile(manifest, JSON.stringify({ v: 1, file: name, tool: 'Grep', sessionId: 's1', args: { pattern: 'TODO' }, turn: 4 }) + '\n');
    const warm = await scanned();
    expect(warm.blob(blob)).toMatchObject({ tool: 'Grep', turn: 4, attribution: 'manifest' });
    await fsp.rm(manifest);
    await fsp.rm(blob);
  });

  it('rebuilds a corrupt index and one of another version', async () => {
    const cold = await scanned();
    const file = await indexFile();
    const good = await fsp.readFile(file, 'utf8');
    for (const bad of [good.slice(0, good.length / 2) + '{"torn', 'not json at all\n', good.replace(`"version":${INDEX_VERSION}`, '"version":999'), '']) {
      await fsp.writeFile(file, bad);
      const rebuilt = await scanned();
      expect(rebuilt.scanStats().reused).toBe(0);
      expect(shown(rebuilt.sessions())).toEqual(shown(cold.sessions()));
      // ... and rewritten whole: the next scan reuses it.
      expect((await scanned()).scanStats().described).toBe(0);
    }
  });

  it('does not trust a stored line holding the wrong types (an edited index), never printing them', async () => {
    const cold = await scanned();
    const file = await indexFile();
    const good = await fsp.readFile(file, 'utf8');
    const title = JSON.stringify(cold.findSessions(fx.claude.sessionId)[0]!.title);
    expect(good).toContain(`"title":${title}`);
    // Same length, so the trailer's line lengths still hold: only the types are wrong.
    const bad = good.replace(`"title":${title}`, `"title":["${title.slice(1, -3)}"]`);
    expect(bad.length).toBe(good.length);
    await fsp.writeFile(file, bad);
    const rescanned = await scanned();
    // A malformed line makes the index untrusted, as a torn one does: described again, as a cold scan would.
    expect(rescanned.scanStats().described).toBeGreaterThan(0);
    expect(shown(rescanned.sessions())).toEqual(shown(cold.sessions()));
  });

  it('several processes at once: each lists everything, the index stays whole, no temporary file is left', async () => {
    const env = { ...fx.env, XDG_CACHE_HOME: cacheDir };
    const args = ['list', '--json', ...fx.userRoots.flatMap((r) => ['--root', r])];
    const runs = await Promise.all(Array.from({ length: 6 }, () => runCli(args, env)));
    for (const run of runs) expect(run.code).toBe(0);
    const outputs = new Set(runs.map((r) => r.stdout));
    expect(outputs.size).toBe(1);
    const listed = JSON.parse(runs[0]!.stdout) as { sessions: unknown[] };
    expect(listed.sessions.length).toBeGreaterThan(5);
    const files = await fsp.readdir(path.join(cacheDir, 'spillway'));
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.jsonl'))).toHaveLength(1);
    const index = await fsp.stat(path.join(cacheDir, 'spillway', files.find((f) => f.endsWith('.jsonl'))!));
    expect(index.mode & 0o777).toBe(0o600);
    // A later run uses it and prints the same.
    const warm = await runCli(args, env);
    expect(warm.stdout).toBe(runs[0]!.stdout);
  }, 60_000);
});
