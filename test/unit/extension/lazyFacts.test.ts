import { describe, expect, it } from 'vitest';
import type { BlobInfo } from '../../../src/catalog/types';
import { LazyFacts } from '../../../src/extension/lazyFacts';
import { blobLabel, blobRow } from '../../../src/extension/treeModel';

const blob = (over: Partial<BlobInfo> = {}): BlobInfo => ({
  key: '/p/pi-bash-0123456789abcdef.log',
  path: '/p/pi-bash-0123456789abcdef.log',
  sessionKey: 'pi:/p',
  name: 'pi-bash-0123456789abcdef.log',
  kind: 'shell-output',
  bytes: 341_000,
  createdAt: '2026-01-01T00:00:00Z',
  mtimeMs: 1000,
  attribution: 'none',
  ...over,
} as BlobInfo);

describe('facts read lazily for a row', () => {
  it('are given back to the same file in a new catalog (Refresh): the row reads the same', () => {
    const facts = new LazyFacts();
    const first = blob();
    expect(facts.fill([first])).toEqual([first]);
    facts.tried(first);
    // What the catalog reads into its blob object.
    first.lines = 2892;
    first.preview = 'npm test\n> vitest run\n';
    first.binary = false;
    facts.record(first);
    const before = blobRow(first);
    // A Refresh: a new catalog, new objects for the same unchanged files, knowing nothing read lazily.
    const again = blob();
    expect(blobRow(again)).not.toEqual(before);
    expect(facts.fill([again])).toEqual([]);
    expect(blobRow(again)).toEqual(before);
    expect(blobLabel(again)).toBe('npm test');
  });

  it('are read again for a file that changed, and not retried for a version that could not be read', () => {
    const facts = new LazyFacts();
    const b = blob();
    facts.tried(b);
    facts.record({ ...b, lines: 10 });
    const grown = blob({ bytes: 400_000, mtimeMs: 2000 });
    expect(facts.fill([grown])).toEqual([grown]);
    expect(grown.lines).toBeUndefined();
    const unreadable = blob({ key: '/p/gone.log', path: '/p/gone.log' });
    facts.tried(unreadable);
    expect(facts.fill([blob({ key: '/p/gone.log', path: '/p/gone.log' })])).toEqual([]);
  });

  it('a head read elsewhere (the Search view) does not stop the tree counting the lines', () => {
    const facts = new LazyFacts();
    facts.record(blob({ preview: 'hello world\n' }));
    const b = blob();
    expect(facts.fill([b])).toEqual([b]);
    expect(b.preview).toBe('hello world\n');
  });

  it('forget blobs no longer listed', () => {
    const facts = new LazyFacts();
    const b = blob({ lines: 3, preview: 'hello world\n' });
    facts.record(b);
    facts.keepOnly(new Set());
    expect(facts.fill([blob()])).toHaveLength(1);
  });
});
