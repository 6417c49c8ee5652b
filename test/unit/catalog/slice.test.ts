import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countLines, indexedCheckpoints, readSlice, CHECKPOINT_LINES } from '../../../src/catalog/read/slice';
import { describeHead, utf8Boundary } from '../../../src/catalog/read/head';

let dir: string;
beforeAll(async () => (dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'slice-'))));
afterAll(async () => fsp.rm(dir, { recursive: true, force: true }));

describe('readSlice', () => {
  it('returns lines A..B (1-based, inclusive) and says when the file ended first', async () => {
    const file = path.join(dir, 'a.txt');
    await fsp.writeFile(file, Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    expect(await readSlice(file, 1, 2)).toMatchObject({ text: 'line 1\nline 2', startLine: 1, endLine: 2, eof: false });
    expect((await readSlice(file, 4999, 6000))).toMatchObject({ text: 'line 4999\nline 5000', endLine: 5000, eof: true });
    expect((await readSlice(file, 6000, 6001))).toMatchObject({ text: '', endLine: 5999, eof: true });
    expect(await countLines(file)).toBe(5000);
    // The forward scans left a sparse index: one checkpoint per 1024 lines.
    expect(indexedCheckpoints(file)).toBe(Math.floor(5000 / CHECKPOINT_LINES) + 1);
    expect((await readSlice(file, 3000, 3000)).text).toBe('line 3000');
  });

  it('handles a last line without newline, empty lines, multibyte text and long lines across chunks', async () => {
    const file = path.join(dir, 'b.txt');
    const long = 'é'.repeat(1_500_000);
    await fsp.writeFile(file, `first\n\n${long}\nlast`);
    expect(await countLines(file)).toBe(4);
    expect((await readSlice(file, 2, 3)).text).toBe(`\n${long}`);
    expect((await readSlice(file, 4, 9))).toMatchObject({ text: 'last', endLine: 4, eof: true });
  });

  it('cuts at maxBytes and refuses bad ranges', async () => {
    const file = path.join(dir, 'c.txt');
    await fsp.writeFile(file, 'x'.repeat(1000) + '\n');
    expect(await readSlice(file, 1, 1, { maxBytes: 10 })).toMatchObject({ text: 'x'.repeat(10), truncated: true });
    await expect(readSlice(file, 0, 1)).rejects.toThrow(/invalid line range/);
    await expect(readSlice(file, 5, 2)).rejects.toThrow(/invalid line range/);
  });

  it('counts an empty file as 0 lines', async () => {
    const file = path.join(dir, 'empty.txt');
    await fsp.writeFile(file, '');
    expect(await countLines(file)).toBe(0);
  });
});

describe('head', () => {
  it('cuts the preview at the last newline inside the budget', () => {
    const head = Buffer.from('aaaa\nbbbb\ncccc');
    expect(describeHead(head, 12).preview).toBe('aaaa\nbbbb');
  });
  it('never splits a UTF-8 sequence', () => {
    const buf = Buffer.from('ab€', 'utf8'); // € is 3 bytes
    expect(utf8Boundary(buf, 4)).toBe(2);
    expect(utf8Boundary(buf, 5)).toBe(5);
  });
  it('flags NUL bytes and invalid UTF-8 as binary', () => {
    expect(describeHead(Buffer.from([0x61, 0, 0x62])).binary).toBe(true);
    expect(describeHead(Buffer.from([0xff, 0xfe, 0x41])).binary).toBe(true);
    expect(describeHead(Buffer.from('plain text\n')).binary).toBe(false);
  });
});
