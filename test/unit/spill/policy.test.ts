import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalSpillStore } from '../../../src/spill/local-store';
import { readManifest } from '../../../src/spill/manifest';
import { createSpillPolicy, DEFAULT_DIGEST_BYTES, DEFAULT_MAX_INLINE_BYTES, type SpillRequest } from '../../../src/spill/policy';
import { utf8Bytes } from '../../../src/spill/text';
import { SpillError, type SaveTextSpill, type SpillRef, type SpillStore } from '../../../src/spill/types';
import { parseValueBlob } from '../../../src/spill/value';
import { tempDir } from './temp-dirs';

const tmp = () => tempDir('spillway-policy-');
const big = (n: number) => Array.from({ length: n }, (_, i) => `row ${i} ${'='.repeat(i % 40)}`).join('\n') + '\n';
const req = (output: unknown, over: Partial<SpillRequest> = {}): SpillRequest => ({
  sessionId: 'sess',
  toolName: 'Bash',
  toolCallId: 'toolu_1',
  args: { command: 'make' },
  output,
  ...over,
});
const logs = () => {
  const lines: string[] = [];
  return { lines, logger: { warn: (m: string) => lines.push(m), debug: () => undefined } };
};
const blobsIn = (root: string) =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== 'spillway.jsonl')
    .map((e) => path.join(e.parentPath, e.name));

describe('threshold gating', () => {
  const root = tmp();
  const policy = createSpillPolicy({ store: new LocalSpillStore({ root }), maxInlineBytes: 1000, digestBytes: 600 });

  it('below and at the threshold: the very same value, nothing written', async () => {
    for (const text of ['x'.repeat(999), 'x'.repeat(1000), 'é'.repeat(500)]) {
      const d = await policy.apply(req(text));
      expect(d.spilled).toBe(false);
      expect(d.output).toBe(text);
      if (!d.spilled) expect(d.reason).toMatch(/at or below/);
    }
    expect(blobsIn(root)).toEqual([]);
  });

  it('above the threshold (in bytes, not chars): full text written, digest returned', async () => {
    const text = 'é'.repeat(501) + '\n' + big(100); // 1002+ bytes
    const d = await policy.apply(req(text));
    expect(d.spilled).toBe(true);
    if (!d.spilled) return;
    expect(readFileSync(d.ref.locator, 'utf8')).toBe(text);
    expect(typeof d.output).toBe('string');
    expect(utf8Bytes(d.output as string)).toBeLessThanOrEqual(600);
    expect(d.output as string).toContain(d.ref.locator);
  });

  it('has sane defaults', () => {
    expect(DEFAULT_DIGEST_BYTES).toBeLessThan(DEFAULT_MAX_INLINE_BYTES);
  });
});

describe('what is never spilled', () => {
  const root = tmp();
  const policy = createSpillPolicy({ store: new LocalSpillStore({ root }), maxInlineBytes: 100, protectedTools: ['mcp__memory__recall', 'TodoWrite'] });
  const text = big(200);

  it.each(['Read', 'read', 'NotebookRead', 'view', 'read_file', 'cat'])('read-like tool %s', async (toolName) => {
    const d = await policy.apply(req(text, { toolName }));
    expect(d).toMatchObject({ spilled: false, reason: expect.stringMatching(/read-like/) });
    expect(d.output).toBe(text);
  });

  it.each(['TodoWrite', 'todo_write', 'mcp__memory__recall'])('protected tool %s', async (toolName) => {
    const d = await policy.apply(req(text, { toolName }));
    expect(d).toMatchObject({ spilled: false, reason: expect.stringMatching(/protected/) });
  });

  it.each([
    ['a Buffer', Buffer.alloc(5000, 65)],
    ['an image block', { content: [{ type: 'text', text }, { type: 'image', source: { type: 'base64', data: 'A'.repeat(9000) } }] }],
    ['an image result', { stdout: text, stderr: '', interrupted: false, isImage: true }],
    ['a number', 42],
    ['null', null],
    ['a Map', new Map([['a', text]])],
    ['a Uint8Array leaf', { data: new Uint8Array(9000) }],
  ])('non-text output: %s', async (_name, output) => {
    const d = await policy.apply(req(output));
    expect(d.spilled).toBe(false);
    expect(d.output).toBe(output);
    if (!d.spilled) expect(d.reason).toMatch(/non-text/);
  });

  it('wrote nothing for any of them', () => {
    expect(blobsIn(root)).toEqual([]);
  });
});

describe('shape-preserving spill of JSON results', () => {
  it('Bash-shaped result: same keys, stderr whole, blob restores the exact value', async () => {
    const root = tmp();
    const policy = createSpillPolicy({ store: new LocalSpillStore({ root }), maxInlineBytes: 2000, digestBytes: 1500 });
    const value = { stdout: big(3000), stderr: 'npm WARN deprecated x\n', interrupted: false, isImage: false };
    const d = await policy.apply(req(value));
    expect(d.spilled).toBe(true);
    if (!d.spilled) return;
    const out = d.output as typeof value;
    expect(Object.keys(out)).toEqual(Object.keys(value));
    expect(out.stderr).toBe(value.stderr);
    expect(out.interrupted).toBe(false);
    expect(out.stdout).toContain(d.ref.locator);
    expect(parseValueBlob(readFileSync(d.ref.locator, 'utf8'))).toEqual(value);
  });

  it('JSON whose strings are all tiny is left alone (a digest could not shrink it)', async () => {
    const policy = createSpillPolicy({ store: new LocalSpillStore({ root: tmp() }), maxInlineBytes: 100, digestBytes: 4096 });
    const value = Array.from({ length: 200 }, (_, i) => ({ id: i, ok: true }));
    const d = await policy.apply(req(value));
    expect(d.spilled).toBe(false);
    expect(d.output).toBe(value);
  });
});

describe('dedup', () => {
  it('an identical later result aliases the first blob: no second write, manifest says aliasOf', async () => {
    const root = tmp();
    const policy = createSpillPolicy({ store: new LocalSpillStore({ root }), maxInlineBytes: 100 });
    const text = big(300);
    const a = await policy.apply(req(text, { toolCallId: 'toolu_a' }));
    const b = await policy.apply(req(text, { toolCallId: 'toolu_b', turn: 7 }));
    expect(a).toMatchObject({ spilled: true, aliased: false });
    expect(b).toMatchObject({ spilled: true, aliased: true });
    if (!a.spilled || !b.spilled) return;
    expect(b.ref.locator).toBe(a.ref.locator);
    expect(blobsIn(root)).toHaveLength(1);
    const { records } = await readManifest(path.dirname(a.ref.locator));
    expect(records.map((r) => [r.toolCallId, r.aliasOf])).toEqual([
      ['toolu_a', undefined],
      ['toolu_b', path.basename(a.ref.locator)],
    ]);
    expect(records[1]!.turn).toBe(7);
  });

  it('works across processes: a second policy + store over the same root finds the blob via the manifest', async () => {
    const root = tmp();
    const text = big(300);
    const first = await createSpillPolicy({ store: new LocalSpillStore({ root }), maxInlineBytes: 100 }).apply(req(text));
    const second = await createSpillPolicy({ store: new LocalSpillStore({ root }), maxInlineBytes: 100 }).apply(req(text, { toolCallId: 'toolu_2' }));
    expect(second).toMatchObject({ spilled: true, aliased: true });
    if (first.spilled && second.spilled) expect(second.ref.locator).toBe(first.ref.locator);
    expect(blobsIn(root)).toHaveLength(1);
  });

  it('a deleted blob is written again instead of aliased', async () => {
    const root = tmp();
    const policy = createSpillPolicy({ store: new LocalSpillStore({ root }), maxInlineBytes: 100 });
    const a = await policy.apply(req(big(300)));
    if (!a.spilled) throw new Error('expected a spill');
    const { unlinkSync } = await import('node:fs');
    unlinkSync(a.ref.locator);
    const b = await policy.apply(req(big(300), { toolCallId: 'toolu_b' }));
    expect(b).toMatchObject({ spilled: true, aliased: false });
    if (b.spilled) expect(readFileSync(b.ref.locator, 'utf8')).toBe(big(300));
  });

  it('is per session: another session writes its own blob', async () => {
    const root = tmp();
    const policy = createSpillPolicy({ store: new LocalSpillStore({ root }), maxInlineBytes: 100 });
    await policy.apply(req(big(300)));
    const other = await policy.apply(req(big(300), { sessionId: 'other' }));
    expect(other).toMatchObject({ spilled: true, aliased: false });
    expect(blobsIn(root)).toHaveLength(2);
  });

  it('a store without a lookup still dedups within the process', async () => {
    const saved: SaveTextSpill[] = [];
    const store: SpillStore = {
      saveText: async (input) => {
        saved.push(input);
        return { locator: `mem://${saved.length}` as SpillRef['locator'], bytes: 1, retrievalHint: 'ask' };
      },
    };
    const policy = createSpillPolicy({ store, maxInlineBytes: 100 });
    await policy.apply(req(big(300)));
    const again = await policy.apply(req(big(300), { toolCallId: 'x' }));
    expect(again).toMatchObject({ spilled: true, aliased: true });
    expect(saved).toHaveLength(1);
  });
});

describe('failures leave the original result and say why', () => {
  const text = big(500);

  it('ENOTDIR (real): a file where the root should be', async () => {
    const base = tmp();
    writeFileSync(path.join(base, 'f'), '');
    const { lines, logger } = logs();
    const policy = createSpillPolicy({ store: new LocalSpillStore({ root: path.join(base, 'f', 'r') }), maxInlineBytes: 100, logger });
    const d = await policy.apply(req(text));
    expect(d.spilled).toBe(false);
    expect(d.output).toBe(text);
    if (!d.spilled) expect(d.reason).toMatch(/ENOTDIR/);
    expect(lines.join('\n')).toMatch(/ENOTDIR/);
  });

  it('a name collision (EEXIST) is a failure, never an overwrite', async () => {
    const root = tmp();
    const store = new LocalSpillStore({ root, randomId: () => 'aaaaaaaaaaaa' });
    const policy = createSpillPolicy({ store, maxInlineBytes: 100 });
    const first = await policy.apply(req(text));
    const second = await policy.apply(req(big(600)));
    expect(first.spilled).toBe(true);
    expect(second).toMatchObject({ spilled: false, reason: expect.stringMatching(/EEXIST/) });
    if (first.spilled) expect(readFileSync(first.ref.locator, 'utf8')).toBe(text);
  });

  it.each(['ENOSPC', 'EACCES', 'EIO'])('%s from the store (injected)', async (code) => {
    const { lines, logger } = logs();
    const store: SpillStore = {
      saveText: async () => {
        throw Object.assign(new Error(`${code}: simulated`), { code });
      },
    };
    const d = await createSpillPolicy({ store, maxInlineBytes: 100, logger }).apply(req(text));
    expect(d).toEqual({ spilled: false, output: text, reason: expect.stringContaining(code) });
    expect(d.output).toBe(text);
    expect(lines).toHaveLength(1);
  });

  it('a missing session id', async () => {
    const { lines, logger } = logs();
    const root = tmp();
    const d = await createSpillPolicy({ store: new LocalSpillStore({ root }), maxInlineBytes: 100, logger }).apply(req(text, { sessionId: '' }));
    expect(d).toMatchObject({ spilled: false, reason: 'no session id' });
    expect(d.output).toBe(text);
    expect(lines[0]).toMatch(/no session id/);
    expect(blobsIn(root)).toEqual([]);
  });

  it('a failing dedup lookup or alias record does not stop the spill', async () => {
    const { lines, logger } = logs();
    const root = tmp();
    const real = new LocalSpillStore({ root });
    const store = {
      saveText: (i: SaveTextSpill) => real.saveText(i),
      findBySha256: async () => {
        throw new SpillError('EIO', 'manifest unreadable');
      },
    };
    const d = await createSpillPolicy({ store, maxInlineBytes: 100, logger }).apply(req(text));
    expect(d.spilled).toBe(true);
    expect(lines.join()).toMatch(/dedup lookup failed/);
  });

  it('never throws, even on hostile input', async () => {
    const policy = createSpillPolicy({ store: new LocalSpillStore({ root: tmp() }), maxInlineBytes: 100 });
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('boom');
        },
      },
    );
    const d = await policy.apply(req(hostile));
    expect(d.spilled).toBe(false);
    expect(d.output).toBe(hostile);
    const cyclic: Record<string, unknown> = { text: big(100) };
    cyclic.self = cyclic;
    expect((await policy.apply(req(cyclic))).output).toBe(cyclic);
  });
});
