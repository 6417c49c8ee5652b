// Where a session's blobs live under a store's root, and how a suggested name becomes one safe path segment.

import * as path from 'node:path';
import { sha256Hex } from './text';
import { type SpillOwner } from './types';

/** Where a session's blobs (and its manifest) live. */
export interface BlobLayout {
  /** Absolute folder of a session's blobs; must lie inside the store's root. */
  dirFor(owner: SpillOwner): string;
}

/** dsh's layout: `<root>/session-<first 12 hex of sha256(sessionId)>`. */
export function sessionHashLayout(root: string): BlobLayout {
  const abs = path.resolve(root);
  return { dirFor: (owner) => path.join(abs, `session-${sha256Hex(owner.sessionId).slice(0, 12)}`) };
}

/** Longest file name most file systems accept, in bytes. */
export const MAX_NAME_BYTES = 255;
export const PREFIX_HEX = 12;

/**
 * One safe path segment: every character outside `[A-Za-z0-9._-]` (separators,
 * `~`, control and non-ASCII characters) becomes `_`, a leading dot becomes `_`
 * (no hidden files, no `.`/`..`), empty becomes `output`, and the result fits
 * `maxBytes` keeping a short extension.
 */
export function sanitizeSegment(name: string, maxBytes = MAX_NAME_BYTES): string {
  let s = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_');
  if (s === '') s = 'output';
  if (s.length <= maxBytes) return s;
  const ext = /\.[A-Za-z0-9]{1,8}$/.exec(s)?.[0] ?? '';
  return s.slice(0, Math.max(1, maxBytes - ext.length)) + ext;
}

