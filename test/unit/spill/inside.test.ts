// isInside / isBelow: one containment check for the store, the hook and the
// catalog. Resolved paths compared by prefix: a sibling sharing the prefix,
// `..` steps and trailing slashes are told apart, and a name that merely starts
// with '..' is inside.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deepestRoot, holds, isBelow, isInside, resolved } from '../../../src/spill/inside';

describe('isInside and isBelow', () => {
  it('tell a folder, its contents, its siblings and its parent apart', () => {
    expect(isInside('/r/a', '/r/a')).toBe(true);
    expect(isBelow('/r/a', '/r/a')).toBe(false);
    expect(isInside('/r/a', '/r/a/b/c')).toBe(true);
    expect(isBelow('/r/a', '/r/a/b')).toBe(true);
    expect(isInside('/r/a', '/r/ab')).toBe(false); // a sibling sharing the prefix
    expect(isInside('/r/a', '/r')).toBe(false);
    expect(isInside('/r/a', '/r/a/../b')).toBe(false);
    expect(isInside('/r/a/', '/r/a/x')).toBe(true);
    expect(isInside('/r/a', '/r/a/..x')).toBe(true); // a name, not a step up
    expect(isInside('/', '/etc')).toBe(true);
    expect(isInside('r', path.resolve('r', 'x'))).toBe(true); // relative paths resolve against the cwd
  });

  it('resolved is path.resolve, which a normalized absolute path passes through as it is', () => {
    const cases = ['/', '/r/a', '/r/a/', '/r//a', '/r/./a', '/r/a/.', '/r/a/..', '/r/../a', '/r/a/..x', '/r/.a/b', '/r/...', 'r/a', '.', '', '//r'];
    for (const p of cases) expect(resolved(p)).toBe(path.resolve(p));
    expect(isBelow('/r/a/b/..', '/r/a')).toBe(false);
    expect(isBelow('/r//a', '/r/a/x')).toBe(true);
  });

  it('holds compares resolved paths as they are', () => {
    expect(holds('/r/a', '/r/a/b')).toBe(true);
    expect(holds('/r/a', '/r/abc')).toBe(false);
    expect(holds('/', '/x')).toBe(true);
  });

  it('deepestRoot picks the innermost root holding a path, the root itself only when asked', () => {
    const roots = [{ path: '/r' }, { path: '/r/a' }, { path: '/r/ab' }];
    expect(deepestRoot(roots, '/r/a/x')?.path).toBe('/r/a');
    expect(deepestRoot(roots, '/r/ab')?.path).toBe('/r/ab');
    expect(deepestRoot(roots, '/r/ab', false)?.path).toBe('/r');
    expect(deepestRoot(roots, '/s')).toBeUndefined();
  });
});
