import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendFileSync } from 'node:fs';
import { appendManifest, MANIFEST_NAME, parseManifest, readManifest, readManifestFrom, type ManifestRecord } from '../../../src/spill/manifest';
import { tempDir } from './temp-dirs';

const record = (file: string): ManifestRecord => ({
  v: 1, file, tool: 'Bash', toolCallId: 'toolu_1', args: { command: 'ls' }, bytes: 10, lines: 2,
  sha256: 'ab', createdAt: '2026-11-29T00:00:00.000Z', sessionId: 's1',
});

describe('manifest', () => {
  it('round-trips appended records', async () => {
    const dir = tempDir('spillway-manifest-');
    await appendManifest(dir, record('a.txt'));
    await appendManifest(dir, { ...record('b.txt'), turn: 3, aliasOf: 'a.txt' });
    const { records, skipped } = await readManifest(dir);
    expect(skipped).toBe(0);
    expect(records.map((r) => r.file)).toEqual(['a.txt', 'b.txt']);
    expect(records[1]).toMatchObject({ turn: 3, aliasOf: 'a.txt' });
  });

  it('ends a line a failed write tore before appending, so the next record is not lost with it', async () => {
    const dir = tempDir('spillway-manifest-');
    await appendManifest(dir, record('a.txt'));
    appendFileSync(path.join(dir, MANIFEST_NAME), JSON.stringify(record('torn.txt')).slice(0, 40));
    await appendManifest(dir, record('b.txt'));
    await appendManifest(dir, record('c.txt'));
    const { records, skipped } = await readManifest(dir);
    expect(records.map((r) => r.file)).toEqual(['a.txt', 'b.txt', 'c.txt']);
    expect(skipped).toBe(1);
  });

  it('skips a torn last line and malformed lines, ignores unknown fields', () => {
    const good = JSON.stringify({ ...record('a.txt'), future: { x: 1 } });
    const text = [good, '{"file": 3}', 'not json', good.slice(0, 20)].join('\n');
    const { records, skipped } = parseManifest(text);
    expect(records).toHaveLength(1);
    expect(records[0]).not.toHaveProperty('future');
    expect(skipped).toBe(3);
  });

  it('leaves out a turn that is no turn number and a time that is no date', () => {
    const lines = [-1, 0, 1.5, 2].map((turn) => JSON.stringify({ ...record(`t${turn}.txt`), turn }));
    const times = ['yesterday', '0', 'Tuesday 1', '2026-02-30T00:00:00Z', '2026-11-29T10:00:00+01:00', '2024-02-29T23:59:59.999Z'];
    for (const createdAt of times) lines.push(JSON.stringify({ ...record('d.txt'), createdAt }));
    const { records } = parseManifest(lines.join('\n'));
    expect(records.map((r) => r.turn)).toEqual([undefined, undefined, undefined, 2, ...times.map(() => undefined)]);
    expect(records.slice(4).map((r) => r.createdAt)).toEqual(['', '', '', '', '2026-11-29T10:00:00+01:00', '2024-02-29T23:59:59.999Z']);
  });

  it('reads a missing manifest as empty', async () => {
    const dir = tempDir('spillway-manifest-');
    expect(await readManifest(dir)).toEqual({ records: [], skipped: 0 });
    writeFileSync(path.join(dir, MANIFEST_NAME), '');
    expect((await readManifest(dir)).records).toEqual([]);
  });

  it('reads only what was appended since an offset, leaving a half-written line for later', async () => {
    const dir = tempDir('spillway-manifest-');
    await appendManifest(dir, record('a.txt'));
    const first = await readManifestFrom(dir, 0);
    expect(first.records.map((r) => r.file)).toEqual(['a.txt']);
    await appendManifest(dir, record('b.txt'));
    const line = JSON.stringify(record('c.txt'));
    appendFileSync(path.join(dir, MANIFEST_NAME), line.slice(0, 30));
    const second = await readManifestFrom(dir, first.offset);
    expect(second.records.map((r) => r.file)).toEqual(['b.txt']);
    appendFileSync(path.join(dir, MANIFEST_NAME), line.slice(30) + '\n');
    const third = await readManifestFrom(dir, second.offset);
    expect(third.records.map((r) => r.file)).toEqual(['c.txt']);
    expect(third.ino).toBe(first.ino);
    // a replaced, shorter manifest is read from the start
    writeFileSync(path.join(dir, MANIFEST_NAME), JSON.stringify(record('d.txt')) + '\n');
    expect((await readManifestFrom(dir, third.offset)).records.map((r) => r.file)).toEqual(['d.txt']);
  });
});
