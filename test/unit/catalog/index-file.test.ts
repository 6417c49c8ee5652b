// The index file: entry lines, then a trailer naming their claims and
// lengths. What one process writes another reads line by line; a file whose
// trailer does not describe its lines exactly is not trusted at all.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IndexReader, IndexWriter, loadIndex, saveIndex, type IndexedClaim, type IndexHeader } from '../../../src/catalog/index/index-file';
import { claimKey } from '../../../src/catalog/sources/source';

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'index-file-'));
  file = path.join(dir, 'cache', 'catalog-test.jsonl');
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

function entry(n: number, blobs: number): IndexedClaim {
  const folder = path.join(dir, `s${n}`, 'tool-results');
  return {
    claim: { source: 'claude-code', dir: path.join(dir, `s${n}`), owns: [folder] },
    described: blobs === 0 ? null : {
      session: { source: 'claude-code', id: `id-${n}`, title: `naïve “title” ${n}\u2028`, dir: path.join(dir, `s${n}`), skipped: n, notes: [] },
      blobs: Array.from({ length: blobs }, (_, i) => ({
        path: path.join(folder, `toolu_${i}.txt`), name: `toolu_${i}.txt`, kind: 'tool-result' as const, tool: 'Bash', toolCallId: `toolu_${i}`,
        args: i % 2 ? undefined : `echo ${i}`, bytes: 100 + i, createdAt: '2026-01-01T00:00:00.000Z', mtimeMs: 1_700_000_000_000 + i, turn: i, attribution: 'transcript' as const,
      })),
      dependsOn: [path.join(dir, `s${n}.jsonl`)],
      blobFolders: [folder],
    },
    stamps: [[folder, `1:2:${n}`]],
    describedAt: 1_700_000_000_000,
  };
}

/** The last walk's listings: one whose claim is session 0's (stored by its line), one whose claim has no line (left out). */
const header = (): IndexHeader => ({
  blobFolders: ['/a/tool-results', 'relative/not/kept'],
  listings: new Map([['/a', { stamp: '1:2:3', claims: [entry(0, 0).claim], children: ['/a/b'] }], ['/z', { stamp: '4:5:6', claims: [entry(99, 0).claim], children: [] }]]),
  walkedAt: 42,
});

describe('index file', () => {
  it('holds more sessions than a call takes arguments (140,000)', async () => {
    // Spreading them into push() threw past some 130,000 and the index was silently never used.
    const many = Array.from({ length: 140_000 }, (_, n) => entry(n, 0));
    await saveIndex(file, many, header());
    const reader = IndexReader.open(file)!;
    expect(reader).toBeDefined();
    expect(reader.size).toBe(many.length);
    expect(reader.entry(139_999)!.claim).toEqual(many[139_999]!.claim);
    reader.close();
  });

  it('records each session\'s last update: the newest can be read first, also of lines copied with theirs', async () => {
    // Line n's newest blob is 1_700_000_000_000 + blobs - 1: 5 is the newest, then 0; none has no update.
    const entries = [entry(0, 4), entry(1, 0), entry(2, 2), entry(3, 1), entry(4, 3), entry(5, 9)];
    await saveIndex(file, entries, header());
    const reader = IndexReader.open(file)!;
    expect(reader.newestFirst()).toEqual([5, 0, 4, 2, 3, 1]);
    // Another index made from this one's lines (a warm scan, which gives each its last update as settled) keeps the order.
    const copy = await IndexWriter.open(path.join(dir, 'cache', 'catalog-copy.jsonl'));
    for (const line of [3, 5, 0]) copy.addLine(reader.claims[line]!, reader.line(line), 1_700_000_000_000 + entries[line]!.described!.blobs.length - 1);
    await copy.commit(header());
    await copy.close();
    const copied = IndexReader.open(path.join(dir, 'cache', 'catalog-copy.jsonl'))!;
    expect(copied.newestFirst()).toEqual([1, 2, 0]);
    copied.close();
    reader.close();
  });

  it('loads the newest sessions first when asked, then the rest; an index that records no updates is read in one go', async () => {
    const entries = Array.from({ length: 12 }, (_, n) => entry(n, 1 + ((n * 7) % 12)));
    await saveIndex(file, entries, header());
    const seen: string[][] = [];
    const index = await loadIndex(file, claimKey, { count: 3, show: (first) => seen.push(first.map((e) => e.described!.session.id)) });
    // The three with the most blobs have the newest: 5 (12 blobs), 10 (11), 3 (10).
    expect(seen).toEqual([['id-5', 'id-10', 'id-3']]);
    expect(index.entries.size).toBe(12);
    // The trailer of an older index, without the updates: nothing is shown first.
    const text = await fsp.readFile(file, 'utf8');
    const lines = text.split('\n');
    const trailer = JSON.parse(lines[lines.length - 2]!) as Record<string, unknown>;
    delete trailer.updated;
    lines[lines.length - 2] = JSON.stringify(trailer);
    await fsp.writeFile(file, lines.join('\n'));
    const older = await loadIndex(file, claimKey, { count: 3, show: (first) => seen.push(first.map((e) => e.described!.session.id)) });
    expect(seen).toHaveLength(1);
    expect(older.entries.size).toBe(12);
  });

  it('reads back what was written: each line alone, all in order, and the trailer', async () => {
    // A line too long for the writer's buffer (700 blobs) goes out on its own, between ones that are buffered.
    const entries = [entry(0, 3), entry(1, 0), entry(2, 700), entry(3, 2)];
    await saveIndex(file, entries, header());
    const reader = IndexReader.open(file)!;
    expect(reader.size).toBe(4);
    expect(reader.claims).toEqual(entries.map((e) => e.claim));
    expect(IndexReader.blobFoldersIn(file)).toEqual(['/a/tool-results']);
    const taken = reader.takeHeader();
    expect(taken.walkedAt).toBe(42);
    expect([...taken.listings]).toEqual([['/a', { stamp: '1:2:3', claims: [0], children: ['/a/b'] }]]);
    // Handed over once: the reader holds it no longer.
    expect(reader.takeHeader().listings.size).toBe(0);
    // Out of order, one at a time (blobs come back with their catalog fields in place).
    for (const i of [2, 3, 0, 1]) {
      const got = reader.entry(i)!;
      expect(got.claim).toEqual(entries[i]!.claim);
      const withoutCatalogFields = got.described?.blobs.map((blob) => {
        const { key: _k, sessionKey: _s, ...rest } = blob as typeof blob & { key?: string; sessionKey?: string };
        return rest;
      });
      expect(withoutCatalogFields).toEqual(entries[i]!.described?.blobs.map((b) => ({ ...b, args: b.args, digestChars: undefined, madeBy: undefined })));
      expect(got.described?.session).toEqual(entries[i]!.described?.session);
    }
    reader.close();
    const loaded = await loadIndex(file, claimKey);
    expect([...loaded.entries.keys()]).toEqual(entries.map((e) => claimKey(e.claim)));
    expect(loaded.walkedAt).toBe(42);
  });

  it('keeps each session as `list --json` prints it at the end of its line, its blobs oldest first', async () => {
    const one = entry(1, 3);
    one.described!.blobs.reverse().forEach((b, i) => (b.createdAt = `2026-01-0${i + 1}T00:00:00.000Z`));
    await saveIndex(file, [entry(0, 0), one], header());
    const reader = IndexReader.open(file)!;
    expect(reader.listed(0)).toBeUndefined(); // no blobs: nothing listed
    const listed = reader.listed(1)!;
    expect(listed.fields).toEqual({ key: claimKey(one.claim), source: 'claude-code', id: 'id-1', title: one.described!.session.title, cwd: null, dir: one.claim.dir, bytes: 100 + 101 + 102 });
    const blobs = listed.blobs.map((b) => JSON.parse(b) as { path: string; args: string | null; createdAt: string });
    expect(blobs.map((b) => path.basename(b.path))).toEqual(['toolu_2.txt', 'toolu_1.txt', 'toolu_0.txt']);
    expect(blobs[0]).toEqual({ path: one.described!.blobs[0]!.path, tool: 'Bash', toolCallId: 'toolu_2', args: 'echo 2', bytes: 102, createdAt: '2026-01-01T00:00:00.000Z', turn: 2, kind: 'tool-result' });
    // The description before it still reads back whole (the title holds a line separator, the tab ends it).
    expect(reader.entry(1)!.described!.session).toEqual(one.described!.session);
    reader.close();
  });

  it('keeps what checking a session needs apart, first on its line: the same stamps and blobs as its description', async () => {
    const entries = [entry(0, 0), entry(1, 4), { ...entry(2, 0), described: null }];
    await saveIndex(file, entries, header());
    const reader = IndexReader.open(file)!;
    for (let i = 0; i < entries.length; i++) {
      const full = reader.entry(i)!;
      const checked = reader.checked(i)!;
      expect(checked.stamps).toEqual(full.stamps);
      expect(checked.describedAt).toBe(full.describedAt);
      expect(checked.blobFolderOf).toEqual(full.blobFolderOf);
      expect(checked.described?.blobs).toEqual(full.described?.blobs.map(({ path, name, bytes, mtimeMs }) => ({ path, name, bytes, mtimeMs })));
      expect(checked.described?.session).toEqual(full.described ? { dir: full.described.session.dir, skipped: full.described.session.skipped, transcript: full.described.session.transcript } : undefined);
    }
    reader.close();
    // A first part with a wrong type is not trusted, whatever the description after it says (same length: the trailer holds).
    const lines = (await fsp.readFile(file, 'utf8')).split('\n');
    const tab = lines[1]!.indexOf('\t');
    lines[1] = lines[1]!.slice(0, tab).replace('"describedAt":1700000000000', '"describedAt":"70000000000"') + lines[1]!.slice(tab);
    await fsp.writeFile(file, lines.join('\n'));
    const edited = IndexReader.open(file)!;
    expect(edited.entry(1)).toBeDefined();
    expect(edited.checked(1)).toBeUndefined();
    edited.close();
  });

  it('reads ahead only while a pass goes on in file order', async () => {
    const entries = Array.from({ length: 40 }, (_, n) => entry(n, 50));
    await saveIndex(file, entries, header());
    const lineBytes = (await fsp.readFile(file, 'utf8')).split('\n').slice(0, 40).reduce((n, line) => n + Buffer.byteLength(line) + 1, 0);
    const reader = IndexReader.open(file)!;
    // In file order: a few reads of 64 KB for the whole pass, every line parsed.
    for (let i = 0; i < 40; i++) expect(reader.entry(i, true)?.claim).toEqual(entries[i]!.claim);
    expect(reader.bytesRead).toBeGreaterThanOrEqual(lineBytes);
    expect(reader.bytesRead).toBeLessThan(2 * lineBytes);
    reader.close();
    // Backwards (a scan's walk need not follow the file): each line alone, not 64 KB for each.
    const back = IndexReader.open(file)!;
    for (let i = 39; i >= 0; i--) expect(back.entry(i, true)?.claim).toEqual(entries[i]!.claim);
    expect(back.bytesRead).toBe(lineBytes);
    back.close();
  });

  it('lists a line checked before from its listed part alone, the same session as from the whole line', async () => {
    const entries = [entry(0, 3), entry(1, 0), entry(2, 5)];
    await saveIndex(file, entries, header());
    const lines = (await fsp.readFile(file, 'utf8')).split('\n');
    const whole = IndexReader.open(file)!;
    const expected = [0, 1, 2].map((i) => whole.listed(i));
    whole.close();
    const reader = IndexReader.open(file)!;
    for (let i = 0; i < entries.length; i++) expect(reader.checked(i, true)).toBeDefined();
    const before = reader.bytesRead;
    // Newest first, as a listing goes: each read is the tail after the line's second tab.
    for (const i of [2, 0, 1]) expect(reader.listed(i)).toEqual(expected[i]);
    const tails = [2, 0].reduce((n, i) => n + Buffer.byteLength(lines[i]!.split('\t').slice(2).join('\t')) + 1, 0);
    expect(reader.bytesRead - before).toBe(tails + Buffer.byteLength(lines[1]!) + 1); // no listed part: the whole line
    reader.close();
  });

  it('keeps a short listed part from the check that read it when the listing is to be printed, and reads a long one again', async () => {
    const entries = [entry(0, 3), entry(1, 0), entry(2, 40)];
    await saveIndex(file, entries, header());
    const lines = (await fsp.readFile(file, 'utf8')).split('\n');
    const listedBytes = (i: number) => Buffer.byteLength(lines[i]!.split('\t').slice(2).join('\t')) + 1;
    expect(listedBytes(0)).toBeLessThan(3 << 10);
    expect(listedBytes(2)).toBeGreaterThan(3 << 10);
    const whole = IndexReader.open(file)!;
    const expected = [0, 1, 2].map((i) => whole.listed(i));
    whole.close();
    const reader = IndexReader.open(file)!;
    for (let i = 0; i < entries.length; i++) expect(reader.checked(i, true, true)).toBeDefined();
    const before = reader.bytesRead;
    for (const i of [2, 0, 1]) expect(reader.listed(i)).toEqual(expected[i]);
    // The long one's tail and the line without a listed part are read; the short one is not read again.
    expect(reader.bytesRead - before).toBe(listedBytes(2) + Buffer.byteLength(lines[1]!) + 1);
    reader.close();
  });

  it('writes a line of MBs a slice at a time without splitting a character: emoji (surrogate pairs) and 3-byte characters come back whole', async () => {
    const withArgs = (n: number, args: (i: number) => string): IndexedClaim => {
      const e = entry(n, 120);
      e.described!.blobs.forEach((b, i) => (b.args = args(i)));
      return e;
    };
    // Runs of pairs at both parities, so that slices end inside pairs wherever the line's other text falls.
    const entries = [withArgs(0, (i) => `${i % 2 ? 'x' : ''}${'😀'.repeat(2500)}`), withArgs(1, (i) => '漢字'.repeat(1500 + i)), entry(2, 1)];
    await saveIndex(file, entries, header());
    expect((await fsp.readFile(file, 'utf8')).includes('\uFFFD')).toBe(false);
    const reader = IndexReader.open(file)!;
    for (const i of [0, 1, 2]) expect(reader.entry(i)!.described!.blobs.map((b) => b.args)).toEqual(entries[i]!.described!.blobs.map((b) => b.args));
    reader.close();
  });

  it('lets the writer read its own lines before it commits, and leaves no file behind when abandoned', async () => {
    const writer = await IndexWriter.open(file);
    const at = [writer.add(entry(0, 2)), writer.add(entry(1, 5000))];
    expect(writer.entry(at[1]!)!.described!.blobs).toHaveLength(5000);
    expect(writer.entry(at[0]!)!.claim).toEqual(entry(0, 2).claim);
    await writer.close();
    expect(await fsp.readdir(path.dirname(file))).toEqual([]);
    expect(IndexReader.open(file)).toBeUndefined();
  });

  it('removes what writers that did not finish left (their process gone, or a day old), and nothing else', async () => {
    // A Ctrl-C during a first scan left its temporary index (tens of MB at 100,000 blobs) for good, one per interrupted run.
    const cache = path.dirname(file);
    await fsp.mkdir(cache, { recursive: true, mode: 0o700 });
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!; // exited: its id names no process
    const alive = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    const temp = (pid: number, tail: string): string => `${path.basename(file)}.${pid}.${tail}.abc123.tmp`;
    const outside = path.join(dir, 'outside.txt');
    await fsp.writeFile(outside, 'keep me');
    const minutesAgo = async (name: string, minutes: number, make: () => Promise<unknown> = () => fsp.writeFile(path.join(cache, name), 'x')): Promise<string> => {
      await make();
      const when = new Date(Date.now() - minutes * 60_000);
      await fsp.lutimes(path.join(cache, name), when, when);
      return name;
    };
    const removed = [await minutesAgo(temp(gone, 'a'), 2), await minutesAgo(temp(alive.pid!, 'b'), 2 * 24 * 60)];
    const kept = [
      await minutesAgo(temp(gone, 'c'), 0), // written to a moment ago: maybe a writer this process cannot see
      await minutesAgo(temp(alive.pid!, 'd'), 2), // its writer still runs
      await minutesAgo(temp(process.pid, 'e'), 2), // this process's own
      await minutesAgo(`${path.basename(file)}.notes.tmp`, 2 * 24 * 60), // not so named
      await minutesAgo(path.basename(file), 2 * 24 * 60), // an index
      await minutesAgo(temp(gone, 'f'), 2, () => fsp.symlink(outside, path.join(cache, temp(gone, 'f')))), // no regular file
      await minutesAgo(temp(gone, 'g'), 2, () => fsp.mkdir(path.join(cache, temp(gone, 'g')))),
    ];
    try {
      const writer = await IndexWriter.open(file);
      await writer.close();
      expect((await fsp.readdir(cache)).sort()).toEqual(kept.sort());
      expect(await fsp.readFile(outside, 'utf8')).toBe('keep me');
      for (const name of removed) expect(existsSync(path.join(cache, name))).toBe(false);
    } finally {
      alive.kill();
    }
  });

  it('removes indexes no run used for a month (another version\'s, other roots\'), and marks the one it reads as used, daily', async () => {
    const cache = path.dirname(file);
    await saveIndex(file, [entry(0, 1)], header());
    const daysAgo = async (name: string, days: number): Promise<string> => {
      if (!existsSync(path.join(cache, name))) await fsp.writeFile(path.join(cache, name), 'an index');
      const when = new Date(Date.now() - days * 24 * 60 * 60_000);
      await fsp.utimes(path.join(cache, name), when, when);
      return name;
    };
    const unused = await daysAgo('catalog-0123456789abcdef.jsonl', 31);
    const recent = await daysAgo('catalog-fedcba9876543210.jsonl', 29);
    // Read two days after it was written: marked used now, so it stays however long it then goes unchanged.
    await daysAgo(path.basename(file), 2);
    IndexReader.open(file)!.close();
    expect(Date.now() - (await fsp.stat(file)).mtimeMs).toBeLessThan(60_000);
    // Read an hour after: not written to again (one mark a day, not a write per run).
    const hourAgo = new Date(Date.now() - 60 * 60_000);
    await fsp.utimes(file, hourAgo, hourAgo);
    IndexReader.open(file)!.close();
    expect(Math.abs((await fsp.stat(file)).mtimeMs - hourAgo.getTime())).toBeLessThan(1);
    const writer = await IndexWriter.open(path.join(cache, 'catalog-other.jsonl'));
    await writer.close();
    const left = await fsp.readdir(cache);
    expect(left).not.toContain(unused);
    expect(left.sort()).toEqual([path.basename(file), recent].sort());
  });

  it('is private: 0600 in a 0700 folder, and never written through a symlink in its place', async () => {
    await saveIndex(file, [entry(0, 1)], header());
    expect((await fsp.stat(file)).mode & 0o777).toBe(0o600);
    expect((await fsp.stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    const elsewhere = path.join(dir, 'elsewhere.jsonl');
    await fsp.copyFile(file, elsewhere);
    await fsp.rm(file);
    await fsp.symlink(elsewhere, file);
    expect(IndexReader.open(file)).toBeUndefined(); // not read through it
    await saveIndex(file, [entry(1, 1)], header()); // replaces the link, never writes through it
    expect((await fsp.lstat(file)).isSymbolicLink()).toBe(false);
    expect(IndexReader.open(elsewhere)!.claims).toEqual([entry(0, 1).claim]);
    // A FIFO in its place is no index (and opening it does not wait for a writer).
    await fsp.rm(file);
    execFileSync('mkfifo', [file]);
    expect(IndexReader.open(file)).toBeUndefined();
  });

  it('gives the blob folders alone, whatever their names hold', async () => {
    const odd = ['/a/x,"walkedAt":1,"listings":[]}', '/b/back\\slash\\', '/c/quote"d/"', '/d/new\nline', '/é/日本'];
    await saveIndex(file, [entry(0, 2)], { ...header(), blobFolders: [...odd, 'relative'] });
    expect(IndexReader.blobFoldersIn(file)).toEqual(odd);
    // The trailer holding them is still read whole.
    const reader = IndexReader.open(file)!;
    expect(reader.size).toBe(1);
    reader.close();
    expect(IndexReader.blobFoldersIn(path.join(dir, 'missing.jsonl'))).toEqual([]);
    // More than one read's worth (64 KB).
    const many = Array.from({ length: 5000 }, (_, i) => `/home/someone/.claude/projects/-p/${i}/tool-results`);
    await saveIndex(file, [entry(0, 2)], { ...header(), blobFolders: many });
    expect(IndexReader.blobFoldersIn(file)).toEqual(many);
  });

  it('trusts nothing when the trailer does not describe the lines exactly', async () => {
    await saveIndex(file, [entry(0, 2), entry(1, 3)], header());
    const good = await fsp.readFile(file, 'utf8');
    const lines = good.split('\n');
    const trailer = JSON.parse(lines[2]!) as { lengths: number[]; claims: unknown[]; version: number };
    const withTrailer = (t: object): string => `${lines[0]}\n${lines[1]}\n${JSON.stringify(t)}\n`;
    const bad = {
      'a length off by one': withTrailer({ ...trailer, lengths: [trailer.lengths[0]! + 1, trailer.lengths[1]!] }),
      'a claim missing': withTrailer({ ...trailer, claims: trailer.claims.slice(1) }),
      'a malformed claim': withTrailer({ ...trailer, claims: [{ dir: 1 }, trailer.claims[1]] }),
      'another version': withTrailer({ ...trailer, version: trailer.version + 1 }),
      'a line lost': `${lines[1]}\n${lines[2]}\n`,
      'a torn trailer': good.slice(0, -10),
      'no final newline': good.slice(0, -1),
      'empty': '',
    };
    for (const [what, text] of Object.entries(bad)) {
      await fsp.writeFile(file, text);
      expect(IndexReader.open(file), what).toBeUndefined();
      expect((await loadIndex(file, claimKey)).entries.size, what).toBe(0);
    }
    for (const what of ['another version', 'a torn trailer', 'no final newline', 'empty'] as const) {
      await fsp.writeFile(file, bad[what]);
      expect(IndexReader.blobFoldersIn(file), what).toEqual([]);
    }
    // Lines that are not what the trailer says, under a trailer that fits the file's size: those lines are
    // unreadable (described again), and loading the whole index gives nothing.
    const width = Buffer.byteLength(lines[0]!);
    const notJson = `${'x'.repeat(width)}\n${lines[1]}\n${lines[2]}\n`;
    const shifted = withTrailer({ ...trailer, lengths: [trailer.lengths[0]! - 1, trailer.lengths[1]! + 1] });
    for (const [what, text, readable] of [['a line not JSON', notJson, [false, true]], ['a boundary moved', shifted, [false, false]]] as const) {
      await fsp.writeFile(file, text);
      const reader = IndexReader.open(file)!;
      expect([0, 1].map((i) => reader.entry(i) !== undefined), what).toEqual(readable);
      reader.close();
      expect((await loadIndex(file, claimKey)).entries.size, what).toBe(0);
    }
  });
});
