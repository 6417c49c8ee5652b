// The Node engine's second thread. A literal search over many bytes is
// mostly reading them from the page cache, which one thread does at a few
// GB/s: a worker searches the files from the last one back while the main
// thread goes from the first (each file taken with one compare-and-swap, see
// from-both-ends.ts), and posts what it found file by file. The main thread
// reports those matches as its own (caps, a slower reader, progress); a file
// the worker took but never reported (it stopped) is searched again there.
import * as path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { FREE, startWorker, TAKEN_HERE, TAKEN_THERE } from '../shared/from-both-ends';
import { CHUNK, searchFile, type FileSearchRun, type Lane } from './grep-file';
import { Literal } from './literal';
import { AS_NAMED, RootedReads } from '../read/rooted-read';
import { workerThreads } from '../shared/workers';

export const DEFAULT_GREP_WORKER = path.join(__dirname, 'grep-ahead-worker.js');

/**
 * Files of this many bytes in all are worth a second thread: below it the worker's start is more than it could
 * take off.
 */
export const SEARCH_AHEAD_MIN_BYTES = 128 << 20;

/** How many ms the worker collects found files before posting them (fewer messages, matches still prompt). */
const POST_EVERY_MS = 8;

export interface SearchAheadJob {
  /** The files, joined by NUL (no path holds one): one string to copy, not one per file (100,000 of them). */
  paths: string;
  /** How many files `paths` names. */
  count: number;
  /** The literal, case-sensitive (the only search the worker does: no regex, no case folding). */
  literal: string;
  /** The pattern's line check (compilePattern()'s): bytes and text agree on valid UTF-8, it judges the rest. */
  lineRegex: { source: string; flags: string };
  maxResults: number;
  /** 0: no per-blob cap. */
  maxPerBlob: number;
  maxLineChars: number;
  /** The catalog's roots, for reads checked against them (see rooted-read.ts); undefined: files as named. */
  roots: readonly string[] | undefined;
  /** An Int32 per path (FREE, TAKEN_HERE, TAKEN_THERE), then STOP and PAUSED. */
  state: SharedArrayBuffer;
}

/** Where the state holds the flag that stops the worker, and the one that holds it (after an Int32 per path). */
const stopAt = (state: Int32Array): number => state.length - 2;
const pausedAt = (state: Int32Array): number => state.length - 1;

/** A file the worker searched: its index, its matches ([line, text]) and the error that ended it, if any. */
export type SearchedThere = [at: number, matches: Array<[number, string]>, error?: string];

/** What the worker posts: the files it finished (found: those with matches or an error), or that it is done. */
type Posted = { done: number[]; found: SearchedThere[] } | { end: true };

export class SearchAhead {
  private readonly reported: Uint8Array;
  private readonly ended: Promise<void>;
  /** What reporting the worker's files threw (the reader of the matches failed): finish() throws it. */
  private failure: unknown;

  private constructor(
    private readonly state: Int32Array,
    private readonly worker: Worker,
    onFiles: (done: number[], found: SearchedThere[]) => void,
  ) {
    this.reported = new Uint8Array(stopAt(state));
    this.ended = new Promise<void>((resolve) => {
      worker.on('message', (posted: Posted) => {
        if ('end' in posted) return resolve();
        for (const at of posted.done) this.reported[at] = 1;
        try {
          onFiles(posted.done, posted.found);
        } catch (err) {
          this.failure ??= err;
          this.stop();
        }
      });
      worker.once('error', () => resolve());
      worker.once('exit', () => resolve());
    });
  }

  /**
   * A worker searching `files` files of `bytes` in all from the last one back; undefined when not worth it or it
   * cannot start. The job (every path joined) is made only when it is.
   */
  static start(files: number, bytes: number, makeJob: () => Omit<SearchAheadJob, 'state'>, onFiles: (done: number[], found: SearchedThere[]) => void, options: { workerFile?: string; minBytes?: number } = {}): SearchAhead | undefined {
    if (bytes < (options.minBytes ?? SEARCH_AHEAD_MIN_BYTES) || files < 2) return undefined;
    const job = makeJob();
    const state = new SharedArrayBuffer(4 * (job.count + 2));
    const worker = startWorker(options.workerFile ?? DEFAULT_GREP_WORKER, { workerData: { ...job, state } satisfies SearchAheadJob });
    return worker && new SearchAhead(new Int32Array(state), worker, onFiles);
  }

  /** Whether this thread may search file `at`; false once the worker has it (and so every file after it). */
  take(at: number): boolean {
    return Atomics.compareExchange(this.state, at, FREE, TAKEN_HERE) === FREE;
  }

  /** Hold the worker before its next read (a slower reader of the matches), or let it go on. */
  hold(on: boolean): void {
    Atomics.store(this.state, pausedAt(this.state), on ? 1 : 0);
    Atomics.notify(this.state, pausedAt(this.state));
  }

  /** Stop the worker after the file it is in (the search was cut or cancelled). */
  stop(): void {
    Atomics.store(this.state, stopAt(this.state), 1);
    this.hold(false);
  }

  /** Once the worker is done: the files it took and never reported, for this thread to search. */
  async finish(): Promise<number[]> {
    await this.ended;
    await this.worker.terminate();
    if (this.failure !== undefined) throw this.failure;
    const left: number[] = [];
    for (let at = 0; at < this.reported.length; at++) if (Atomics.load(this.state, at) === TAKEN_THERE && !this.reported[at]) left.push(at);
    return left;
  }
}

/** The worker's side: take files from the last one back until it meets one the main thread took. */
export async function searchFromTheEnd(job: SearchAheadJob): Promise<void> {
  const port = workerThreads().parentPort!;
  const state = new Int32Array(job.state);
  const STOP = stopAt(state);
  const PAUSED = pausedAt(state);
  let done: number[] = [];
  let found: SearchedThere[] = [];
  let posted = Date.now();
  const post = (): void => {
    if (done.length > 0) port.postMessage({ done, found } satisfies Posted);
    done = [];
    found = [];
    posted = Date.now();
  };
  let matches: Array<[number, string]> = [];
  const run: FileSearchRun = {
    emit: (m) => matches.push([m.line, m.text]) < job.maxResults,
    blobFull: () => job.maxPerBlob > 0 && matches.length > job.maxPerBlob,
    readerBehind: () => {
      if (Atomics.load(state, PAUSED) === 1) post();
      while (Atomics.load(state, PAUSED) === 1 && Atomics.load(state, STOP) === 0) Atomics.wait(state, PAUSED, 1, 100);
      return undefined;
    },
    stopped: () => Atomics.load(state, STOP) !== 0,
    reads: job.roots ? new RootedReads(job.roots) : AS_NAMED,
  };
  const matcher = { needle: new Literal(Buffer.from(job.literal, 'utf8')), literalOnly: true, lineRegex: new RegExp(job.lineRegex.source, job.lineRegex.flags), maxLineChars: job.maxLineChars };
  const lane: Lane = { buffer: Buffer.allocUnsafe(CHUNK * 2), pause: () => undefined };
  // The paths from the last one back, each cut from the joined string only when taken.
  let end = job.paths.length;
  for (let at = job.count - 1; at >= 0 && !run.stopped(); at--) {
    if (Atomics.compareExchange(state, at, FREE, TAKEN_THERE) !== FREE) break;
    const start = job.paths.lastIndexOf('\0', end - 1) + 1;
    const file = job.paths.slice(start, end);
    end = start - 1;
    matches = [];
    let error: string | undefined;
    try {
      await searchFile(file, matcher, run, lane);
    } catch (err) {
      error = (err as Error).message;
    }
    // A search stopped midway is not reported: its file's matches would be partial (the main thread drops it).
    if (run.stopped()) break;
    done.push(at);
    if (matches.length > 0 || error !== undefined) found.push(error === undefined ? [at, matches] : [at, matches, error]);
    if (Date.now() - posted >= POST_EVERY_MS) post();
  }
  post();
  port.postMessage({ end: true } satisfies Posted);
}

