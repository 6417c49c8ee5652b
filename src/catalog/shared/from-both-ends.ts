// Work two threads share from both ends of a list (blob-check.ts: an index's
// lines; describe-ahead.ts: sessions to describe): one Int32 per item in a
// SharedArrayBuffer, FREE until a thread takes it with one compare-and-swap,
// so each item is done once, by whichever thread reaches it first.
import { existsSync } from 'node:fs';
import type { Worker, WorkerOptions } from 'node:worker_threads';
import { newWorker } from './workers';

export const FREE = 0;
/** Taken by the worker, which goes from the last item back. */
export const TAKEN_THERE = 1;
/** Taken by the scan, which goes from the first. */
export const TAKEN_HERE = 2;

/** A worker thread running `file`; undefined when the file is missing (running from the sources) or it cannot start. */
export function startWorker(file: string, options: WorkerOptions): Worker | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return newWorker(file, options);
  } catch {
    return undefined;
  }
}
