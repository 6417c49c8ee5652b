// Real folder watchers over real folders: new, changed and deleted blobs update only
// their session; bursts are coalesced; appended transcripts are read on.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import type { CatalogEvent } from '../../../src/catalog/types';
import { buildFixtureHome, type FixtureHome } from '../../fixtures/build-home';

let dir: string;
let fx: FixtureHome;
let catalog: Catalog;
let events: CatalogEvent[];

/** Polls `test` until it holds; fails after 10 s naming `what`. */
async function until(test: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !test(); await new Promise((r) => setTimeout(r, 25))) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
  }
}

/** Resolves with the first event (after `since`) that satisfies `test`. */
function waitFor(test: (e: CatalogEvent) => boolean, since = events.length): Promise<CatalogEvent> {
  return new Promise((resolve) => {
    const check = (): void => {
      const hit = events.slice(since).find(test);
      if (hit) resolve(hit);
      else setTimeout(check, 20);
    };
    check();
  });
}

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-live-'));
  fx = await buildFixtureHome(dir, { realClaude: false });
  catalog = new Catalog({ env: fx.env, roots: fx.userRoots });
  events = [];
  catalog.onDidChange((e) => events.push(e));
  await catalog.scan();
  await waitFor((e) => e.full, 0);
  await catalog.watch();
});
afterEach(async () => {
  await catalog.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

const claudeKey = (): string => catalog.findSessions(fx.claude.sessionId)[0]!.key;

describe('live catalog', () => {
  it('a new blob appears in its session only, named from the transcript once it is appended', async () => {
    const key = claudeKey();
    const since = events.length;
    const blob = path.join(fx.claude.toolResults, 'toolu_01NewJJJJJJJJJJJJJJJJJJJJJ.txt');
    await fsp.writeFile(blob, 'fresh output\n'.repeat(3000));
    const event = await waitFor((e) => e.changed.includes(key), since);
    expect(event.changed).toEqual([key]);
    expect(event.full).toBe(false);
    expect(catalog.blob(blob)).toMatchObject({ attribution: 'none' });

    const again = events.length;
    await fsp.appendFile(
      fx.claude.transcript,
      '\n' +
        JSON.stringify({ type: 'assistant', isSidechain: false, sessionId: fx.claude.sessionId, timestamp: '2026-03-01T11:00:00.000Z', message: { id: 'msg_C1', model: 'claude-opus-5-5', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01NewJJJJJJJJJJJJJJJJJJJJJ', name: 'Bash', input: { command: 'make fresh' } }], usage: { input_tokens: 1, cache_creation_input_tokens: 100, cache_read_input_tokens: 8000, output_tokens: 5 } } }) +
        '\n',
    );
    await waitFor((e) => e.changed.includes(key), again);
    expect(catalog.blob(blob)).toMatchObject({ tool: 'Bash', args: 'make fresh', attribution: 'transcript', turn: 8 });
  });

  it('a changed blob updates its size; a deleted one disappears; an emptied session is removed', async () => {
    const key = catalog.findSessions(fx.spillway.sessionId)[0]!.key;
    let since = events.length;
    await fsp.appendFile(fx.spillway.blob, 'one more line\n');
    await waitFor((e) => e.changed.includes(key), since);
    expect(catalog.blob(fx.spillway.blob)!.bytes).toBe((await fsp.stat(fx.spillway.blob)).size);
    since = events.length;
    await fsp.rm(fx.spillway.blob);
    const removed = await waitFor((e) => e.removed.includes(key), since);
    expect(removed.changed).not.toContain(key);
    expect(catalog.session(key)).toBeUndefined();
    expect(catalog.blob(fx.spillway.blob)).toBeUndefined();
  });

  it('coalesces a burst of writes into few events naming only the touched session', async () => {
    const key = catalog.findSessions(fx.dsh.dir.split('session-')[1]!)[0]!.key;
    const since = events.length;
    await Promise.all(Array.from({ length: 40 }, (_, i) => fsp.writeFile(path.join(fx.dsh.dir, `${(0xabc000 + i).toString(16)}-burst${i}.txt`), `burst ${i}\n`)));
    await waitFor(() => catalog.session(key)!.blobs.length === 41, since);
    const burst = events.slice(since);
    expect(burst.length).toBeLessThanOrEqual(5);
    expect(new Set(burst.flatMap((e) => e.changed))).toEqual(new Set([key]));
    expect(burst.every((e) => !e.full)).toBe(true);
  });

  it('a new session folder under a root becomes a new session', async () => {
    const sessionDir = path.join(fx.env.XDG_STATE_HOME!, 'spillway', 'spills', 'session-0123456789ab');
    const since = events.length;
    await fsp.mkdir(sessionDir, { recursive: true });
    await fsp.writeFile(path.join(sessionDir, 'ab12-out.txt'), 'new\n');
    await fsp.writeFile(path.join(sessionDir, 'spillway.jsonl'), JSON.stringify({ v: 1, file: 'ab12-out.txt', tool: 'Read', toolCallId: 'c1', bytes: 4, lines: 1, sha256: '', createdAt: '2026-03-05T00:00:00.000Z', sessionId: 'brand-new' }) + '\n');
    await waitFor(() => catalog.findSessions('brand-new').length === 1, since);
    expect(catalog.findSessions('brand-new')[0]!.blobs[0]).toMatchObject({ tool: 'Read', toolCallId: 'c1' });
  });

  it('waits for a file being written to settle before reading it', async () => {
    const key = claudeKey();
    const blob = path.join(fx.claude.toolResults, 'toolu_01SlowKKKKKKKKKKKKKKKKKKKK.txt');
    const handle = await fsp.open(blob, 'w');
    for (let i = 0; i < 5; i++) {
      await handle.write('chunk of a slow writer\n'.repeat(1000));
      await new Promise((r) => setTimeout(r, 40));
    }
    await handle.close();
    const size = (await fsp.stat(blob)).size;
    await waitFor(() => catalog.blob(blob)?.bytes === size);
    expect(catalog.session(key)!.blobs.some((b) => b.path === blob)).toBe(true);
  });
});

/** Inotify watches this process holds (Linux: each inotify descriptor lists its watches in fdinfo). */
async function inotifyWatches(): Promise<number> {
  let n = 0;
  for (const fd of await fsp.readdir('/proc/self/fdinfo')) {
    const info = await fsp.readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '');
    n += info.split('\n').filter((l) => l.startsWith('inotify wd:')).length;
  }
  return n;
}

describe('live catalog: folders, not files', () => {
  it.runIf(process.platform === 'linux')('watches each folder once and none of the files in it', async () => {
    const root = path.join(dir, 'many-files');
    const session = path.join(root, 'session-0123456789ab');
    await fsp.mkdir(path.join(session, 'sub'), { recursive: true });
    await Promise.all(Array.from({ length: 300 }, (_, i) => fsp.writeFile(path.join(session, `${(0xa000 + i).toString(16)}-out.txt`), `${i}\n`)));
    const c = new Catalog({ env: fx.env, useDefaultRoots: false, roots: [root] });
    await c.scan();
    const before = await inotifyWatches();
    await c.watch();
    // The root, the session folder and its sub-folder: three, whatever the number of files.
    expect((await inotifyWatches()) - before).toBe(3);
    await c.dispose();
    expect(await inotifyWatches()).toBe(before);
  });

  it('a session folder made after watching started is watched: later blobs in it show, also after it is removed and made again', async () => {
    const sessionId = '7c0ffee0-0000-4000-8000-00000000beef';
    const sessionDir = path.join(path.dirname(fx.claude.sessionDir), sessionId);
    const toolResults = path.join(sessionDir, 'tool-results');
    const blob = (name: string) => path.join(toolResults, `toolu_${name}.txt`);
    const blobsOf = () => catalog.findSessions(sessionId)[0]?.blobs.map((b) => path.basename(b.path)).sort() ?? [];
    await fsp.mkdir(toolResults, { recursive: true });
    await fsp.writeFile(blob('first'), 'first\n');
    await until(() => blobsOf().length === 1, 'the new session');
    // Written well after its folder appeared: seen only if that folder is watched.
    await new Promise((r) => setTimeout(r, 400));
    await fsp.writeFile(blob('second'), 'second\n');
    await until(() => blobsOf().length === 2, 'a second blob in the new folder');
    expect(blobsOf()).toEqual(['toolu_first.txt', 'toolu_second.txt']);

    await fsp.rm(toolResults, { recursive: true });
    await until(() => blobsOf().length === 0, 'the removed folder');
    await fsp.mkdir(toolResults);
    await new Promise((r) => setTimeout(r, 400));
    await fsp.writeFile(blob('third'), 'third\n');
    await until(() => blobsOf().length === 1, 'a blob in the folder made again');
    expect(blobsOf()).toEqual(['toolu_third.txt']);
  });
});

describe('live catalog: a watched folder swapped for a symlink', () => {
  it('never lists what is written behind the symlink, and goes on with the folder put back', async () => {
    const key = claudeKey();
    const outside = path.join(dir, 'outside-target');
    await fsp.mkdir(outside);
    const moved = `${fx.claude.toolResults}.moved`;
    // The watched folder goes away and a symlink to a folder outside the roots takes its name.
    await fsp.rename(fx.claude.toolResults, moved);
    await fsp.symlink(outside, fx.claude.toolResults);
    await waitFor(() => catalog.session(key) === undefined || catalog.session(key)!.blobs.length === 0, 0);
    // Written through the link and in the moved folder (whose watcher, if kept, would still report it under the old name).
    await fsp.writeFile(path.join(outside, 'toolu_01OutsideLLLLLLLLLLLLLLLLL.txt'), 'outside\n');
    await fsp.writeFile(path.join(moved, 'toolu_01MovedMMMMMMMMMMMMMMMMMMM.txt'), 'moved\n');
    await new Promise((r) => setTimeout(r, 800));
    const listed = () => catalog.sessions().flatMap((s) => s.blobs.map((b) => b.path));
    expect(listed().filter((p) => p.includes('Outside') || p.includes('Moved') || p.startsWith(outside))).toEqual([]);
    // Put back: the folder is watched again, and a blob written in it later shows.
    await fsp.rm(fx.claude.toolResults);
    await fsp.rename(moved, fx.claude.toolResults);
    await waitFor(() => (catalog.session(key)?.blobs.length ?? 0) > 0);
    await new Promise((r) => setTimeout(r, 400));
    const later = path.join(fx.claude.toolResults, 'toolu_01LaterNNNNNNNNNNNNNNNNNNNN.txt');
    await fsp.writeFile(later, 'later\n');
    await waitFor(() => catalog.blob(later) !== undefined);
    expect(listed().filter((p) => p.startsWith(outside))).toEqual([]);
  });
});

describe('a root that appears later', () => {
  it('is walked and watched once it exists', async () => {
    const later = path.join(dir, 'later-root');
    const c = new Catalog({ env: fx.env, useDefaultRoots: false, roots: [later], rootPollMs: 50 });
    const seen: CatalogEvent[] = [];
    c.onDidChange((e) => seen.push(e));
    await c.scan();
    await c.watch();
    expect(c.knownRoots()[0]!.exists).toBe(false);
    const session = path.join(later, 'session-aaaaaaaaaaaa');
    await fsp.mkdir(session, { recursive: true });
    await fsp.writeFile(path.join(session, 'bb01-first.txt'), 'first\n');
    await fsp.writeFile(path.join(session, 'spillway.jsonl'), JSON.stringify({ v: 1, file: 'bb01-first.txt', tool: 'Grep', toolCallId: 'g1', bytes: 6, lines: 1, sha256: '', createdAt: '2026-03-05T00:00:00.000Z', sessionId: 'late' }) + '\n');
    while (c.findSessions('late').length === 0) await new Promise((r) => setTimeout(r, 25));
    expect(c.findSessions('late')[0]!.blobs.map((b) => b.tool)).toEqual(['Grep']);
    // And it is live from then on.
    await fsp.writeFile(path.join(session, 'bb02-second.txt'), 'second\n');
    while (c.findSessions('late')[0]!.blobs.length < 2) await new Promise((r) => setTimeout(r, 25));
    expect(seen.some((e) => e.changed.length > 0)).toBe(true);
    await c.dispose();
  });

  it('is watched again when it is removed and made again', async () => {
    const root = path.join(dir, 'remade-root');
    const manifest = (file: string, id: string) => JSON.stringify({ v: 1, file, tool: 'Grep', toolCallId: file, bytes: 6, lines: 1, sha256: '', createdAt: '2026-03-05T00:00:00.000Z', sessionId: id }) + '\n';
    const session = path.join(root, 'session-aaaaaaaaaaaa');
    await fsp.mkdir(session, { recursive: true });
    await fsp.writeFile(path.join(session, 'cc01-first.txt'), 'first\n');
    await fsp.writeFile(path.join(session, 'spillway.jsonl'), manifest('cc01-first.txt', 'before'));
    const c = new Catalog({ env: fx.env, useDefaultRoots: false, roots: [root], rootPollMs: 50 });
    await c.scan();
    await c.watch();
    expect(c.findSessions('before')).toHaveLength(1);
    // Cleared away whole (as a user frees the disk), then the agent makes it again.
    await fsp.rm(root, { recursive: true });
    await until(() => c.findSessions('before').length === 0, 'the removed root\'s session gone');
    await new Promise((r) => setTimeout(r, 200));
    const again = path.join(root, 'session-bbbbbbbbbbbb');
    await fsp.mkdir(again, { recursive: true });
    await fsp.writeFile(path.join(again, 'dd01-first.txt'), 'first\n');
    await fsp.writeFile(path.join(again, 'spillway.jsonl'), manifest('dd01-first.txt', 'after'));
    await until(() => c.findSessions('after').length === 1, 'the session in the root made again');
    // Live in the new folder, not only walked once.
    await new Promise((r) => setTimeout(r, 200));
    await fsp.writeFile(path.join(again, 'dd02-second.txt'), 'second\n');
    await fsp.appendFile(path.join(again, 'spillway.jsonl'), manifest('dd02-second.txt', 'after'));
    await until(() => c.findSessions('after')[0]?.blobs.length === 2, 'a later blob in it');
    await c.dispose();
  });

  it('lets its sessions go when it is moved away whole (a rename sends no event for the files in it)', async () => {
    const root = path.join(dir, 'moved-root');
    const session = path.join(root, 'session-aaaaaaaaaaaa');
    await fsp.mkdir(session, { recursive: true });
    await fsp.writeFile(path.join(session, 'ee01-first.txt'), 'first\n');
    await fsp.writeFile(path.join(session, 'spillway.jsonl'), JSON.stringify({ v: 1, file: 'ee01-first.txt', tool: 'Grep', toolCallId: 'e1', bytes: 6, lines: 1, sha256: '', createdAt: '2026-03-05T00:00:00.000Z', sessionId: 'moved' }) + '\n');
    const c = new Catalog({ env: fx.env, useDefaultRoots: false, roots: [root], rootPollMs: 50 });
    const removed: string[] = [];
    c.onDidChange((e) => removed.push(...e.removed));
    await c.scan();
    await c.watch();
    const key = c.findSessions('moved')[0]!.key;
    await fsp.rename(root, path.join(dir, 'moved-root-elsewhere'));
    await until(() => c.findSessions('moved').length === 0, 'the moved root\'s session gone');
    await until(() => removed.includes(key), 'its removal announced');
    await c.dispose();
  });
});
