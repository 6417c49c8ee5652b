// A warm scan stats every blob of every unchanged session (a blob that grew in
// place must show its new size) and its stamps: at 100,000 blobs that is most
// of its time, on one core. A worker thread takes the index's lines from the
// last one back while the scan goes on from the first, so the stats run on two
// cores; each line is checked once, by whichever thread reaches it first. The
// worker opens the index itself (by path, refused unless it is the same file),
// so closing the scan's descriptor never races a read of its.
import { closeSync, fstatSync, openSync, readSync, constants as fsConstants } from 'node:fs';
import * as path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { FREE, startWorker, TAKEN_HERE, TAKEN_THERE } from '../shared/from-both-ends';
import { workerThreads } from '../shared/workers';
import { lineStillHolds } from '../index/index-file';

/** What the worker is handed: the index file, which file it must be, and where its lines lie. */
export interface BlobCheckJob {
  file: string;
  dev: number;
  ino: number;
  offsets: number[];
  lengths: number[];
  /** One Int32 per line, FREE until a thread takes it (from-both-ends.ts), then its verdict. */
  state: SharedArrayBuffer;
}

const UNCHANGED = 3;
const CHANGED = 4;

/** The worker's script beside this bundle (dist/); absent when running from the sources (tests name a built one). */
export const DEFAULT_BLOB_CHECK_WORKER = path.join(__dirname, 'blob-check-worker.js');

/**
 * Lines of this many bytes or more are worth a second thread: about 18,000 blobs (a line keeps some 600 bytes a blob,
 * half of them what `list --json` prints of it); below, starting it cost more than it saved. One line is never
 * shared: both threads would parse it.
 */
export const CHECK_AHEAD_MIN_BYTES = 10 << 20;

/** An index's lines, whose stamps and blobs a worker checks ahead; `unchanged()` is asked in the scan's order. */
export class BlobCheck {
  /** Lines the worker judged (for the scan's stats and the tests). */
  private judgedThere = 0;

  private constructor(
    private readonly state: Int32Array,
    private readonly worker: Worker,
    /** Settles once the worker has the file open and takes lines (or has given up). */
    readonly ready: Promise<void>,
  ) {}

  /**
   * Start the worker (before the scan's walk, which its start overlaps); undefined when it is not worth it or
   * cannot start: the scan then checks every line itself, as it does any line the worker has not taken.
   */
  static start(job: Omit<BlobCheckJob, 'state'>, workerFile: string, minBytes = CHECK_AHEAD_MIN_BYTES): BlobCheck | undefined {
    const bytes = job.lengths.reduce((a, b) => a + b, 0);
    if (bytes < minBytes || job.offsets.length < 2) return undefined;
    const state = new SharedArrayBuffer(4 * job.offsets.length);
    const worker = startWorker(workerFile, { workerData: { ...job, state } satisfies BlobCheckJob });
    if (!worker) return undefined;
    const ready = new Promise<void>((resolve) => {
      worker.once('message', () => resolve());
      worker.once('error', () => resolve());
      worker.once('exit', () => resolve());
    });
    // Not unref'd: while the scan awaits `ready`, the worker may be all that keeps the event loop alive (an unref'd
    // one let the process exit there, with nothing printed). The scan always stops it.
    return new BlobCheck(new Int32Array(state), worker, ready);
  }

  /** Whether line `i` still holds (stamps and blobs): the worker's verdict, or `check()` here when it has not taken the line. */
  unchanged(i: number, check: () => boolean): boolean {
    const was = Atomics.compareExchange(this.state, i, FREE, TAKEN_HERE);
    if (was === FREE || was === TAKEN_HERE) return check();
    // Taken there: at most one line's stats away.
    if (was === TAKEN_THERE) Atomics.wait(this.state, i, TAKEN_THERE, 5000);
    const verdict = Atomics.load(this.state, i);
    if (verdict === TAKEN_THERE) return check(); // the worker stopped mid-line
    this.judgedThere++;
    return verdict === UNCHANGED;
  }

  /** How many of the lines the scan asked about the worker had judged. */
  get judgedByWorker(): number {
    return this.judgedThere;
  }

  /** Stop the worker (it may still be going through lines nobody will ask about). */
  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

/** The worker's side: take lines from the last one back, judge each one nobody took. */
export function checkLinesFromTheEnd(job: BlobCheckJob): void {
  const state = new Int32Array(job.state);
  let fd: number;
  try {
    fd = openSync(job.file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch {
    return;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.dev !== job.dev || stat.ino !== job.ino) return; // replaced meanwhile: judge nothing
    workerThreads().parentPort?.postMessage('ready');
    let buffer = Buffer.allocUnsafe(64 << 10);
    for (let i = job.offsets.length - 1; i >= 0; i--) {
      if (Atomics.compareExchange(state, i, FREE, TAKEN_THERE) !== FREE) continue;
      let holds = false;
      try {
        const length = job.lengths[i]!;
        if (buffer.length < length) buffer = Buffer.allocUnsafe(length);
        holds = readSync(fd, buffer, 0, length, job.offsets[i]!) === length && lineStillHolds(buffer.subarray(0, length));
      } finally {
        // Whatever happened, the line is released: the scan may be waiting on it. (Not holding: described again.)
        Atomics.store(state, i, holds ? UNCHANGED : CHANGED);
        Atomics.notify(state, i);
      }
    }
  } finally {
    closeSync(fd);
  }
}
