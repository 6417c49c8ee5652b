// Whether a path lies in a folder: both resolved, then compared by prefix.
// One place for it (the engine's store, the hook, the catalog's describing,
// reads and clean all ask), and cheap: the catalog looks up a root for every
// session, and path.relative against each of some twenty roots was a tenth
// of describing one.
import * as path from 'node:path';

/** Whether the resolved path `target` is the resolved path `root` or lies below it. */
export function holds(root: string, target: string): boolean {
  return target === root || target.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/** The deepest of `roots` (their paths resolved) holding the resolved path `target`; with `orSelf` false, not a root that is `target` itself. */
export function deepestRoot<R extends { path: string }>(roots: readonly R[], target: string, orSelf = true): R | undefined {
  let best: R | undefined;
  for (const root of roots) {
    if ((orSelf || root.path !== target) && holds(root.path, target) && (!best || root.path.length > best.path.length)) best = root;
  }
  return best;
}

/** Whether `target` is `root` or lies below it (either may be relative or not normalized). */
export function isInside(root: string, target: string): boolean {
  return holds(path.resolve(root), path.resolve(target));
}

/** Whether `target` lies below `root`, not `root` itself. */
export function isBelow(root: string, target: string): boolean {
  const resolved = path.resolve(target);
  const base = path.resolve(root);
  return resolved !== base && holds(base, resolved);
}
