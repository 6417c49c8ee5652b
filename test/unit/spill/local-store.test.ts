import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSpillRoot, LocalSpillStore, MAX_NAME_BYTES, sanitizeSegment, sessionHashLayout } from '../../../src/spill/local-store';
import { readManifest } from '../../../src/spill/manifest';
import type { SaveTextSpill } from '../../../src/spill/types';
import { tempDir } from './temp-dirs';

const tmp = () => tempDir('spillway-store-');
const save = (content: string, over: Partial<SaveTextSpill> = {}): SaveTextSpill => ({
  owner: { sessionId: 'sess-1' },
  source: { toolName: 'Bash', callId: 'toolu_01', label: 'npm test' },
  suggestedName: 'Bash-toolu_01.txt',
  content,
  ...over,
});
const hash12 = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

describe('sanitizeSegment', () => {
  it.each([
    ['a/b\\c', 'a_b_c'],
    ['~/x', '__x'],
    ['~', '_'],
    ['.', '_'],
    ['..', '_.'],
    ['../../etc/passwd', '_._.._etc_passwd'],
    ['', 'output'],
    ['a\u0000b\nc\td', 'a_b_c_d'],
    ['résumé €.txt', 'r_sum___.txt'],
    ['toolu_01ABC-x.txt', 'toolu_01ABC-x.txt'],
  ])('%j -> %j', (input, out) => {
    const s = sanitizeSegment(input);
    expect(s).toBe(out);
    expect(s).not.toMatch(/[/\\]/);
    expect(['.', '..']).not.toContain(s);
  });

  it('caps very long names at 255 bytes and keeps the extension', () => {
    const s = sanitizeSegment('x'.repeat(1000) + '.txt');
    expect(Buffer.byteLength(s)).toBe(MAX_NAME_BYTES);
    expect(s.endsWith('.txt')).toBe(true);
    expect(Buffer.byteLength(sanitizeSegment('🙂'.repeat(300)))).toBeLessThanOrEqual(MAX_NAME_BYTES);
  });
});

describe('defaultSpillRoot', () => {
  it('uses XDG_STATE_HOME, else ~/.local/state; never the temp folder', () => {
    expect(defaultSpillRoot({ XDG_STATE_HOME: '/x/state', HOME: '/home/u' })).toBe('/x/state/spillway/spills');
    expect(defaultSpillRoot({ HOME: '/home/u' })).toBe('/home/u/.local/state/spillway/spills');
    expect(defaultSpillRoot({ XDG_STATE_HOME: 'relative', HOME: '/home/u' })).toBe('/home/u/.local/state/spillway/spills');
    expect(defaultSpillRoot({ HOME: '/home/u' }).startsWith(tmpdir())).toBe(false);
  });
});

describe('LocalSpillStore.saveText', () => {
  it('writes the full text into session-<12 hex of sha256(id)>, 0600 file in 0700 folder', async () => {
    const root = path.join(tmp(), 'spills');
    const store = new LocalSpillStore({ root });
    const ref = await store.saveText(save('hello\nworld\n'));
    const dir = path.join(root, `session-${hash12('sess-1')}`);
    expect(path.dirname(ref.locator)).toBe(dir);
    expect(sessionHashLayout(root).dirFor({ sessionId: 'sess-1' })).toBe(dir);
    expect(readFileSync(ref.locator, 'utf8')).toBe('hello\nworld\n');
    expect(statSync(ref.locator).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(ref.bytes).toBe(12);
    expect(ref.lines).toBe(2);
    expect(ref.retrievalHint).toMatch(/offset\/limit/);
    expect(path.basename(ref.locator)).toMatch(/^[0-9a-f]{12}-Bash-toolu_01\.txt$/);
  });

  it('keeps small arguments whole in the record and cuts big ones down (a 300 KB payload would be read back by every later dedup lookup)', async () => {
    const root = path.join(tmp(), 'spills');
    const store = new LocalSpillStore({ root });
    const small = { command: 'npm test', timeout: 5000, env: ['A=1'] };
    const big = { file_path: '/w/notes.md', content: 'x'.repeat(300_000), items: Array.from({ length: 500 }, (_, i) => ({ i, text: 'y'.repeat(100) })) };
    const a = await store.saveText(save('one\n', { args: small }));
    await store.saveText(save('two\n', { args: big }));
    const manifest = path.join(path.dirname(a.locator), 'spillway.jsonl');
    const lines = readFileSync(manifest, 'utf8').trim().split('\n');
    const [first, second] = lines.map((l) => JSON.parse(l));
    expect(first.args).toEqual(small);
    expect(lines[1]!.length).toBeLessThan(20_000);
    expect(second.args.file_path).toBe('/w/notes.md');
    expect(second.args.content).toMatch(/^x{1023}…$/);
    expect(second.args.items).toHaveLength(21);
  });

  it('appends one manifest record per save', async () => {
    const root = tmp();
    const store = new LocalSpillStore({ root });
    const ref = await store.saveText(save('a\nb\nc', { args: { command: 'ls' }, turn: 4 }));
    const { records, skipped } = await readManifest(path.dirname(ref.locator));
    expect(skipped).toBe(0);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      v: 1,
      file: path.basename(ref.locator),
      tool: 'Bash',
      toolCallId: 'toolu_01',
      args: { command: 'ls' },
      bytes: 5,
      lines: 3,
      sha256: createHash('sha256').update('a\nb\nc').digest('hex'),
      sessionId: 'sess-1',
      turn: 4,
    });
    expect(Number.isNaN(Date.parse(records[0]!.createdAt))).toBe(false);
  });

  it('gives distinct paths per save, also when call ids repeat, and keeps hostile names inside', async () => {
    const root = tmp();
    const store = new LocalSpillStore({ root });
    const refs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.saveText(save(`body ${i}`, { suggestedName: i % 2 ? '../../escape' : 'same-id' }))),
    );
    expect(new Set(refs.map((r) => r.locator)).size).toBe(20);
    const dir = path.dirname(refs[0]!.locator);
    for (const r of refs) expect(path.dirname(r.locator)).toBe(dir);
    expect(readdirSync(dir).filter((f) => f !== 'spillway.jsonl')).toHaveLength(20);
  });

  it('fails (does not follow) when a symlink is planted at the target name', async () => {
    const root = tmp();
    const victim = path.join(tmp(), 'victim.txt');
    writeFileSync(victim, 'original');
    const store = new LocalSpillStore({ root, randomId: () => 'fixedfixed00' });
    const dir = path.join(root, `session-${hash12('sess-1')}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    symlinkSync(victim, path.join(dir, 'fixedfixed00-Bash-toolu_01.txt'));
    await expect(store.saveText(save('attack'))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(victim, 'utf8')).toBe('original');
  });

  it('fails when a symlink stands in place of the session folder', async () => {
    const root = tmp();
    const elsewhere = tmp();
    symlinkSync(elsewhere, path.join(root, `session-${hash12('sess-1')}`));
    const store = new LocalSpillStore({ root });
    await expect(store.saveText(save('attack'))).rejects.toMatchObject({ code: 'ELOOP' });
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('reports ENOTDIR when a file sits where the root folder should be (real failure, even as root)', async () => {
    const base = tmp();
    writeFileSync(path.join(base, 'file'), 'x');
    const store = new LocalSpillStore({ root: path.join(base, 'file', 'spills') });
    await expect(store.saveText(save('x'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('refuses a layout that points outside the root', async () => {
    const root = tmp();
    const outside = tmp();
    const store = new LocalSpillStore({ root, layout: { dirFor: () => outside } });
    await expect(store.saveText(save('x'))).rejects.toMatchObject({ code: 'EOUTSIDE' });
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses a session folder others can write to', async () => {
    const root = tmp();
    const dir = path.join(root, `session-${hash12('sess-1')}`);
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    await expect(new LocalSpillStore({ root }).saveText(save('x'))).rejects.toMatchObject({ code: 'EPERM' });
  });

  it('refuses to save without a session id', async () => {
    const store = new LocalSpillStore({ root: tmp() });
    await expect(store.saveText(save('x', { owner: { sessionId: '' } }))).rejects.toMatchObject({ code: 'ENOSESSION' });
  });

  it('supports a custom layout (pi: <sessionDir>/<sessionId>-blobs)', async () => {
    const sessionDir = tmp();
    const store = new LocalSpillStore({ root: sessionDir, layout: { dirFor: (o) => path.join(sessionDir, `${o.sessionId}-blobs`) } });
    const ref = await store.saveText(save('pi output'));
    expect(path.dirname(ref.locator)).toBe(path.join(sessionDir, 'sess-1-blobs'));
    expect(lstatSync(path.dirname(ref.locator)).mode & 0o777).toBe(0o700);
  });
});

describe('dedup lookup, aliases and external files', () => {
  it('finds an earlier blob by sha256 from another store instance (another process)', async () => {
    const root = tmp();
    const a = new LocalSpillStore({ root });
    const ref = await a.saveText(save('same body\n'));
    const b = new LocalSpillStore({ root });
    const found = await b.findBySha256({ sessionId: 'sess-1' }, ref.sha256!);
    expect(found?.locator).toBe(ref.locator);
    expect(await b.findBySha256({ sessionId: 'other' }, ref.sha256!)).toBeUndefined();
    expect(await b.findBySha256({ sessionId: 'sess-1' }, 'f'.repeat(64))).toBeUndefined();
  });

  it('a long-lived store sees records appended by another process after its first lookup', async () => {
    const root = tmp();
    const a = new LocalSpillStore({ root });
    const b = new LocalSpillStore({ root });
    const first = await a.saveText(save('first\n'));
    expect((await a.findBySha256({ sessionId: 'sess-1' }, first.sha256!))?.locator).toBe(first.locator);
    const second = await b.saveText(save('second\n'));
    expect((await a.findBySha256({ sessionId: 'sess-1' }, second.sha256!))?.locator).toBe(second.locator);
  });

  it('ignores a recorded blob that was deleted or changed size', async () => {
    const root = tmp();
    const store = new LocalSpillStore({ root });
    const ref = await store.saveText(save('body'));
    writeFileSync(ref.locator, 'changed body');
    expect(await store.findBySha256({ sessionId: 'sess-1' }, ref.sha256!)).toBeUndefined();
  });

  it('records an alias without a second file', async () => {
    const root = tmp();
    const store = new LocalSpillStore({ root });
    const ref = await store.saveText(save('body'));
    await store.recordAlias({ owner: { sessionId: 'sess-1' }, source: { toolName: 'Bash', callId: 'toolu_02', label: '' }, original: ref, turn: 2 });
    const dir = path.dirname(ref.locator);
    expect(readdirSync(dir).sort()).toEqual([path.basename(ref.locator), 'spillway.jsonl'].sort());
    const { records } = await readManifest(dir);
    expect(records[1]).toMatchObject({ toolCallId: 'toolu_02', aliasOf: path.basename(ref.locator), sha256: ref.sha256, turn: 2 });
  });

  it('records a file the agent wrote itself, relative to the manifest folder', async () => {
    const session = tmp();
    mkdirSync(path.join(session, 'tool-results'));
    writeFileSync(path.join(session, 'tool-results', 'b123.txt'), 'x\ny\n');
    const store = new LocalSpillStore({ root: session, layout: { dirFor: () => path.join(session, 'spillway') } });
    const owner = { sessionId: 's' };
    const ref = await store.recordExternal({ owner, source: { toolName: 'Bash', callId: 'toolu_9', label: '' }, file: '../tool-results/b123.txt' });
    expect(ref).toMatchObject({ locator: path.join(session, 'tool-results', 'b123.txt'), bytes: 4, lines: 2 });
    const { records } = await readManifest(path.join(session, 'spillway'));
    expect(records[0]).toMatchObject({ file: '../tool-results/b123.txt', bytes: 4, lines: 2, sha256: ref.sha256 });
    expect((await store.findBySha256(owner, ref.sha256!))?.locator).toBe(ref.locator);
    await expect(store.recordExternal({ owner, source: { toolName: 'Bash', callId: 'x', label: '' }, file: '../../../etc/passwd' })).rejects.toMatchObject({
      code: 'EOUTSIDE',
    });
    // a symlinked folder inside the root that leads out of it
    const outside = tmp();
    writeFileSync(path.join(outside, 'secret.txt'), 'x');
    symlinkSync(outside, path.join(session, 'linked'));
    await expect(store.recordExternal({ owner, source: { toolName: 'Bash', callId: 'y', label: '' }, file: '../linked/secret.txt' })).rejects.toMatchObject({
      code: 'EOUTSIDE',
    });
  });
});
