import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBlobOnlyFolder, removeEmptiedBlobFolders } from '../../../src/catalog/clean/emptyFolders';
import { MANIFEST_NAME } from '../../../src/spill/manifest';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-empty-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function dir(...parts: string[]): string {
  const p = path.join(root, ...parts);
  fs.mkdirSync(p, { recursive: true });
  return p;
}

describe('removing emptied blob-only folders', () => {
  it('knows the folders made only for blobs', () => {
    expect(isBlobOnlyFolder('/h/.claude/projects/p/s/tool-results')).toBe(true);
    expect(isBlobOnlyFolder('/h/.pi/agent/sessions/x/2026_abc-blobs')).toBe(true);
    expect(isBlobOnlyFolder('/h/.claude/projects/p')).toBe(false);
    expect(isBlobOnlyFolder('/h/-blobs')).toBe(false);
  });

  it('removes an emptied tool-results/ and a -blobs/ holding only an emptied manifest', async () => {
    const tr = dir('p', 's1', 'tool-results');
    const blobs = dir('pi', 'abc-blobs');
    fs.writeFileSync(path.join(blobs, MANIFEST_NAME), '\n');
    const removed = await removeEmptiedBlobFolders([path.join(tr, 'b1.txt'), path.join(blobs, 'x.txt')], [root]);
    expect(removed.sort()).toEqual([blobs, tr].sort());
    expect(fs.existsSync(tr) || fs.existsSync(blobs)).toBe(false);
    // The session folder above stays: it may hold the transcript or other files.
    expect(fs.existsSync(path.join(root, 'p', 's1'))).toBe(true);
  });

  it('leaves folders that still hold something, other folders, roots and symlinked paths alone', async () => {
    const full = dir('a', 'tool-results');
    fs.writeFileSync(path.join(full, 'left.txt'), 'x');
    const records = dir('b', 'x-blobs');
    fs.writeFileSync(path.join(records, MANIFEST_NAME), '{"v":1}\n');
    const plain = dir('c', 'session');
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-outside-'));
    const target = path.join(outside, 'tool-results');
    fs.mkdirSync(target);
    fs.symlinkSync(outside, path.join(root, 'link'));
    try {
      const removed = await removeEmptiedBlobFolders(
        [path.join(full, 'gone.txt'), path.join(records, 'gone.txt'), path.join(plain, 'gone.txt'), path.join(root, 'link', 'tool-results', 'gone.txt'), path.join(target, 'gone.txt')],
        [root],
      );
      expect(removed).toEqual([]);
      for (const p of [full, records, plain, target]) expect(fs.existsSync(p)).toBe(true);
      // A root that is itself a blob-only folder stays.
      const rootLike = dir('r', 'tool-results');
      expect(await removeEmptiedBlobFolders([path.join(rootLike, 'gone.txt')], [rootLike])).toEqual([]);
      expect(fs.existsSync(rootLike)).toBe(true);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('leaves a folder whose manifest is a FIFO (without waiting on it) or a large file', async () => {
    const fifo = dir('f', 'tool-results');
    execFileSync('mkfifo', [path.join(fifo, MANIFEST_NAME)]);
    const large = dir('g', 'x-blobs');
    fs.writeFileSync(path.join(large, MANIFEST_NAME), ' '.repeat(1 << 20));
    const removed = await removeEmptiedBlobFolders([path.join(fifo, 'b1.txt'), path.join(large, 'b1.txt')], [root]);
    expect(removed).toEqual([]);
    expect(fs.existsSync(path.join(fifo, MANIFEST_NAME)) && fs.existsSync(path.join(large, MANIFEST_NAME))).toBe(true);
  });
});
