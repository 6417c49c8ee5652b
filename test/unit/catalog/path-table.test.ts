// The trailer's path table: every path given comes back exactly as it was, each folder stored once,
// and a table edited to name what it should not is refused whole.
import { describe, expect, it } from 'vitest';
import { PathTable, storedPaths } from '../../../src/catalog/index/path-table';

describe('PathTable', () => {
  it('gives back every path exactly, whatever its shape', () => {
    const given = ['/', '/a/b', '/a/b/', '/a//b/c', '/a/./b', '/a/b/../c', 'relative/not/kept', '.', '', '/a/b/c d/ü.txt', '/a/b/"q"\\x', '/a/b'];
    const table = new PathTable();
    const numbers = given.map((p) => table.number(p));
    const back = storedPaths(JSON.parse(JSON.stringify(table.stored)));
    expect(numbers.map((n) => back![n])).toEqual(given);
    expect(numbers[1]).toBe(numbers.at(-1)); // the same path, the same number
  });

  it('stores each folder once: siblings cost a name each', () => {
    const table = new PathTable();
    for (let i = 0; i < 100; i++) table.number(`/home/u/.claude/projects/-p/session-${i}/tool-results`);
    // '/', home, u, .claude, projects, -p: then a session folder and its tool-results for each.
    expect(table.stored).toHaveLength(6 + 200);
    expect(table.stored.filter((e) => typeof e === 'string')).toEqual(['/']);
    expect(table.stored.at(-1)).toEqual([table.stored.length - 2, 'tool-results']);
  });

  it('refuses a table naming a folder not stored before it, or a name that is not one', () => {
    expect(storedPaths([['/a'], [0, 'b']])).toBeUndefined();
    for (const bad of [[1, 'x'], [2, 'x'], [-1, 'x'], [0.5, 'x'], [0, ''], [0, '.'], [0, '..'], [0, 'a/b'], [0, 1], [0], [0, 'x', 'y'], 7, null, {}]) {
      expect(storedPaths(['/root', bad]), JSON.stringify(bad)).toBeUndefined();
    }
    expect(storedPaths('/root')).toBeUndefined();
    expect(storedPaths(['/root', [0, 'x'], [1, 'y']])).toEqual(['/root', '/root/x', '/root/x/y']);
  });
});
