import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { childPath, folderHolding } from '../../../src/catalog/shared/child-path';

describe('folderHolding', () => {
  it('gives the folder a blob is the entry of, as path.dirname does', () => {
    for (const file of ['/a/b/c.txt', '/home/u/.claude/projects/-x/1234/tool-results/toolu_1.txt', '/a/b c/ü.txt']) {
      const name = path.basename(file);
      expect(folderHolding(file, name)).toBe(path.dirname(file));
      expect(childPath(folderHolding(file, name)!, name)).toBe(file);
    }
  });

  it('gives nothing when the name is not the path\'s last part, holds a separator, or the folder is the root', () => {
    expect(folderHolding('/a/b/c.txt', 'd.txt')).toBeUndefined();
    expect(folderHolding('/a/bc.txt', 'c.txt')).toBeUndefined(); // a suffix, not an entry
    expect(folderHolding('/a/b/c.txt', 'b/c.txt')).toBeUndefined();
    expect(folderHolding('/c.txt', 'c.txt')).toBeUndefined();
    expect(folderHolding('c.txt', 'c.txt')).toBeUndefined();
    expect(folderHolding('/a/b/', '')).toBeUndefined();
  });
});
