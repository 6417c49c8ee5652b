// A sparse line index of a blob, kept in its remote record: where a line
// starts about every INDEX_STEP bytes. `show --lines A:B` on a remote copy
// starts its ranged read at the indexed line at or before A, so a slice near
// the end of a 1 GB blob reads about a step, not the gigabyte before it.
import { Transform, type TransformCallback } from 'node:stream';

export const INDEX_STEP = 1 << 20;

/** [line number (1-based), byte offset where it starts], ascending; always starts with [1, 0]. */
export type LineIndex = Array<[number, number]>;

/** A pass-through stream that builds the index of what goes through it. */
export class LineIndexer extends Transform {
  readonly index: LineIndex = [[1, 0]];
  private offset = 0;
  private line = 1;
  private nextMark = INDEX_STEP;

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.add(chunk);
    done(null, chunk);
  }

  /** Takes the next bytes into the index (what `_transform` does, for a blob read whole). */
  add(chunk: Buffer): void {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a, from); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
      this.line++;
      const start = this.offset + nl + 1;
      if (start >= this.nextMark) {
        this.index.push([this.line, start]);
        this.nextMark = start + INDEX_STEP;
      }
      from = nl + 1;
    }
    this.offset += chunk.length;
  }
}

/** The indexed point to start reading line `line` from. */
export function startFor(index: LineIndex | undefined, line: number): [number, number] {
  let best: [number, number] = [1, 0];
  for (const entry of index ?? []) {
    if (entry[0] > line) break;
    best = entry;
  }
  return best;
}
