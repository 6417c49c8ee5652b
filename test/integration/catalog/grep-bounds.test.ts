// grep stays bounded: one-line blobs of tens of MB through ripgrep, a
// catastrophic regex in the Node engine, smart case and the per-blob cap.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { effectiveIgnoreCase, grep } from '../../../src/catalog/grep/grep';
import { LineReader } from '../../../src/catalog/grep/line-reader';
import type { GrepMatch, GrepOptions } from '../../../src/catalog/types';

let dir: string;
beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'grep-bounds-'));
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

async function collect(options: GrepOptions & { paths: string[] }): Promise<{ matches: GrepMatch[]; summary: Awaited<ReturnType<typeof grep>> }> {
  const matches: GrepMatch[] = [];
  const summary = await grep(options, (m) => matches.push(m));
  return { matches, summary };
}

describe('ripgrep output reader', () => {
  it('splits lines cut anywhere across chunks, and drops a line over its bound', () => {
    const lines: string[] = [];
    const reader = new LineReader(1 << 20, (l) => lines.push(l.toString()));
    const text = 'a\x001:one\nb\x002:two two\n\nc\x003:three';
    for (let i = 0; i < text.length; i += 3) reader.push(Buffer.from(text.slice(i, i + 3)));
    reader.end();
    expect(lines).toEqual(['a\u00001:one', 'b\u00002:two two', '', 'c\u00003:three']);
    const long: string[] = [];
    const bounded = new LineReader(1 << 20, (l) => long.push(l.toString().slice(0, 5)));
    bounded.push(Buffer.alloc(2 << 20, 'x'));
    bounded.push(Buffer.from('x\nshort\n'));
    expect(long).toEqual(['short']);
  });
});

describe('long lines', () => {
  for (const engine of ['rg', 'node'] as const) {
    it(`${engine}: finds a match in a 48 MB one-line blob and prints it clipped`, async () => {
      const file = path.join(dir, `one-line-${engine}.txt`);
      const body = Buffer.alloc(48 << 20, 'a');
      body.write('NEEDLE', body.length - 100);
      await fsp.writeFile(file, body);
      const { matches, summary } = await collect({ pattern: 'NEEDLE', paths: [file], engine, maxLineChars: 50 });
      expect(summary.errors).toEqual([]);
      expect(matches).toEqual([{ path: file, line: 1, text: 'a'.repeat(50) + '…' }]);
    }, 120_000);
  }
});

describe('cancelling the Node engine', () => {
  it('stops on an abort that comes from outside the search (its reads are synchronous, yet the event loop gets turns)', async () => {
    const files: string[] = [];
    const body = Buffer.alloc(4 << 20, 'no match on this line\n');
    for (let i = 0; i < 32; i++) {
      files.push(path.join(dir, `cancel-${i}.txt`));
      await fsp.writeFile(files[i]!, body);
    }
    const controller = new AbortController();
    let done = 0;
    // The abort is queued on the event loop, as a click or a timer would be.
    const summary = await grep({ pattern: 'NEEDLE', paths: files, engine: 'node' }, () => undefined, controller.signal, (p) => {
      if (done === 0) setImmediate(() => controller.abort());
      done = p.filesDone;
    });
    expect(summary.cancelled).toBe(true);
    expect(done).toBeLessThan(files.length);
  }, 60_000);
});

describe('catastrophic regexes', () => {
  it('node: a regex that backtracks forever costs one file an error, not the search', async () => {
    const evil = path.join(dir, 'evil.txt');
    const fine = path.join(dir, 'fine.txt');
    await fsp.writeFile(evil, 'a'.repeat(40) + 'b\n');
    await fsp.writeFile(fine, 'aaa\n');
    for (const pattern of ['(a+)+$', '^(a|aa)+$']) {
      const { matches, summary } = await collect({ pattern, regex: true, paths: [evil, fine], engine: 'node', regexTimeoutMs: 300 });
      expect(matches).toEqual([{ path: fine, line: 1, text: 'aaa' }]);
      expect(summary.errors).toHaveLength(1);
      expect(summary.errors[0]!.path).toBe(evil);
      expect(summary.errors[0]!.message).toMatch(/gave up after 300 ms/);
    }
  }, 60_000);
});

describe('smart case', () => {
  it('is case-insensitive only when the pattern has no uppercase letter', () => {
    expect(effectiveIgnoreCase({ pattern: 'error', smartCase: true })).toBe(true);
    expect(effectiveIgnoreCase({ pattern: 'Error', smartCase: true })).toBe(false);
    expect(effectiveIgnoreCase({ pattern: 'über', smartCase: true })).toBe(true);
    expect(effectiveIgnoreCase({ pattern: 'Über', smartCase: true })).toBe(false);
    // Escapes are not letters of the text.
    expect(effectiveIgnoreCase({ pattern: 'fail\\W+\\S', regex: true, smartCase: true })).toBe(true);
    expect(effectiveIgnoreCase({ pattern: 'fail\\WX', regex: true, smartCase: true })).toBe(false);
    expect(effectiveIgnoreCase({ pattern: 'error' })).toBe(false);
    expect(effectiveIgnoreCase({ pattern: 'Error', ignoreCase: true, smartCase: true })).toBe(true);
  });

  for (const engine of ['rg', 'node'] as const) {
    it(`${engine}: applies it`, async () => {
      const file = path.join(dir, 'case.txt');
      await fsp.writeFile(file, 'Error one\nerror two\nERROR three\n');
      const lower = await collect({ pattern: 'error', smartCase: true, paths: [file], engine });
      expect(lower.matches.map((m) => m.line)).toEqual([1, 2, 3]);
      const upper = await collect({ pattern: 'Error', smartCase: true, paths: [file], engine });
      expect(upper.matches.map((m) => m.line)).toEqual([1]);
    });
  }
});

describe('max per blob', () => {
  for (const engine of ['rg', 'node'] as const) {
    it(`${engine}: caps each blob, names the blobs cut, and still caps the total`, async () => {
      const many = path.join(dir, 'many.txt');
      const two = path.join(dir, 'two.txt');
      const three = path.join(dir, 'three.txt');
      await fsp.writeFile(many, 'hit\n'.repeat(50));
      await fsp.writeFile(two, 'hit\nhit\n');
      await fsp.writeFile(three, 'hit\nhit\nhit\n');
      const { matches, summary } = await collect({ pattern: 'hit', maxPerBlob: 3, paths: [many, two, three], engine });
      const per = (p: string): number[] => matches.filter((m) => m.path === p).map((m) => m.line);
      expect(per(many)).toEqual([1, 2, 3]);
      expect(per(two)).toEqual([1, 2]);
      expect(per(three)).toEqual([1, 2, 3]);
      expect(summary.cappedBlobs).toEqual([many]);
      expect(summary.truncated).toBe(false);
      const total = await collect({ pattern: 'hit', maxPerBlob: 3, maxResults: 4, paths: [many, two, three], engine });
      expect(total.matches).toHaveLength(4);
      expect(total.summary.truncated).toBe(true);
    });
  }
});

describe('grep through the catalog', () => {
  it('searches blob folders whole: only blobs are reported (not the manifest), matches stream before the end', async () => {
    const root = path.join(dir, 'catalog-root');
    const folder = path.join(root, 'session-00000000abcd');
    await fsp.mkdir(folder, { recursive: true });
    const records: string[] = [];
    for (let i = 0; i < 300; i++) {
      await fsp.writeFile(path.join(folder, `blob-${i}.txt`), `first line\nneedle in blob ${i}\n`);
      records.push(JSON.stringify({ v: 1, file: `blob-${i}.txt`, sessionId: 's', tool: 'Bash', toolCallId: `c${i}`, args: 'grep needle', bytes: 30, createdAt: '2026-01-01T00:00:00.000Z' }));
    }
    await fsp.writeFile(path.join(folder, 'spillway.jsonl'), records.join('\n') + '\n');
    const catalog = new Catalog({ roots: [root], useDefaultRoots: false });
    await catalog.scan({ statBlobs: false });
    for (const engine of ['rg', 'node'] as const) {
      const all: GrepMatch[] = [];
      const summary = await catalog.grep({ pattern: 'needle', engine, maxResults: 10_000 }, (m) => all.push(m));
      expect(summary.errors).toEqual([]);
      expect(all).toHaveLength(300);
      expect(all.every((m) => m.line === 2 && m.path.endsWith('.txt'))).toBe(true);
      // Streaming: the first match arrives while the search still runs, and stopping there stops it.
      const controller = new AbortController();
      const seen: GrepMatch[] = [];
      const stopped = await catalog.grep({ pattern: 'needle', engine, maxResults: 10_000 }, (m) => {
        seen.push(m);
        controller.abort();
      }, controller.signal);
      expect(stopped.cancelled).toBe(true);
      expect(seen.length).toBeLessThan(300);
    }
    await catalog.dispose();
  });
});
