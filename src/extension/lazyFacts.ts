// Facts about a blob read only when its row is listed (its line count, its
// head, which names an unattributed output), kept here by file version. A
// Refresh builds a new catalog whose blobs know none of them yet: each is
// given back what was read for the same file (size and mtime unchanged), so
// a row reads the same whichever path drew it. Pure (no vscode).

import type { BlobInfo } from '../catalog/types';

interface Known {
  /** `bytes:mtimeMs` of the file version the facts were read from. */
  stamp: string;
  /** Whether the tree read (or tried to read) this version's facts: a file that cannot be read is not retried. */
  tried: boolean;
  lines?: number;
  preview?: string;
  binary?: boolean;
}

const stampOf = (b: BlobInfo): string => `${b.bytes}:${b.mtimeMs}`;

/** Whether a row of this blob still lacks a fact it shows. */
function lacking(b: BlobInfo): boolean {
  if (b.binary) return false;
  return b.lines === undefined || (!b.tool && !b.args && b.preview === undefined);
}

export class LazyFacts {
  private readonly known = new Map<string, Known>();

  /**
   * Gives each blob the facts read before for its file version, and returns those still to read: lacking a fact
   * and not tried for this version (a file that cannot be read is not retried on every redraw).
   */
  fill(blobs: readonly BlobInfo[]): BlobInfo[] {
    const todo: BlobInfo[] = [];
    for (const b of blobs) {
      const k = this.known.get(b.key);
      const same = k !== undefined && k.stamp === stampOf(b);
      if (same) {
        if (b.lines === undefined && k.lines !== undefined) b.lines = k.lines;
        if (b.preview === undefined && k.preview !== undefined) b.preview = k.preview;
        if (b.binary === undefined && k.binary !== undefined) b.binary = k.binary;
      }
      if (!lacking(b)) this.record(b);
      else if (!(same && k.tried)) todo.push(b);
    }
    return todo;
  }

  /** Marks the blob's version as tried (before reading), so a redraw meanwhile does not read it again. */
  tried(b: BlobInfo): void {
    const k = this.known.get(b.key);
    this.known.set(b.key, k && k.stamp === stampOf(b) ? { ...k, tried: true } : { stamp: stampOf(b), tried: true });
  }

  /** Keeps what the blob knows now (after its facts were read). The head only of an output nothing else names. */
  record(b: BlobInfo): void {
    const k = this.known.get(b.key);
    this.known.set(b.key, {
      stamp: stampOf(b),
      tried: k !== undefined && k.stamp === stampOf(b) && k.tried,
      ...(b.lines !== undefined ? { lines: b.lines } : {}),
      ...(b.binary !== undefined ? { binary: b.binary } : {}),
      ...(!b.tool && !b.args && b.preview !== undefined ? { preview: b.preview } : {}),
    });
  }

  /** Forgets blobs no longer listed anywhere (deleted), so the map does not grow for ever. */
  keepOnly(keys: ReadonlySet<string>): void {
    for (const key of this.known.keys()) if (!keys.has(key)) this.known.delete(key);
  }
}
