// Whether a path lies in a folder: both resolved, then compared by prefix.
// One place for it (the engine's store, the hook, the catalog's describing,
// reads and clean all ask), and cheap: the catalog looks up a root for every
// session, and path.relative against each of some twenty roots was a tenth
// of describing one.
import * as path from 'node:path';

/** Whether the resolved path `target` is the resolved path `root` or lies below it. */
export function holds(root: string, target: string): boolean {
  if (target === root || root.endsWith(path.sep)) return target.startsWith(root);
  // Not `root + sep`: a string made for each of thousands of checks.
  return target.length > root.length && target[root.length] === path.sep && target.startsWith(root);
}

/** The deepest of `roots` (their paths resolved) holding the resolved path `target`; with `orSelf` false, not a root that is `target` itself. */
export function deepestRoot<R extends { path: string }>(roots: readonly R[], target: string, orSelf = true): R | undefined {
  let best: R | undefined;
  for (const root of roots) {
    if ((orSelf || root.path !== target) && holds(root.path, target) && (!best || root.path.length > best.path.length)) best = root;
  }
  return best;
}

/** A separator followed by nothing, '.', '..' or another separator: what path.resolve would change in an absolute path. */
const UNRESOLVED = /\/\.{0,2}(?:\/|$)/;

/**
 * path.resolve(p), without its cost for a path that is absolute and normalized already (a POSIX one: the
 * catalog's paths are, and checking thousands of them took tens of ms).
 */
export function resolved(p: string): string {
  return path.sep === '/' && p.startsWith('/') && !UNRESOLVED.test(p) ? p : path.resolve(p);
}

/** Whether `target` is `root` or lies below it (either may be relative or not normalized). */
export function isInside(root: string, target: string): boolean {
  return holds(resolved(root), resolved(target));
}

/** Whether `target` lies below `root`, not `root` itself. */
export function isBelow(root: string, target: string): boolean {
  const file = resolved(target);
  const base = resolved(root);
  return file !== base && holds(base, file);
}
