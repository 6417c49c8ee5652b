// User regexes in the Node search run in a worker thread that is terminated
// when one chunk takes too long: JavaScript regexes backtrack, and a pattern
// like `(a+)+$` on a line of 40 `a`s and a `b` would otherwise never return
// (ripgrep's engine is linear and needs no such guard). Literal searches never
// come here: they cannot backtrack.
import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { newWorker } from '../shared/workers';

/** Default budget for one chunk (a few MB of lines); normal regexes take milliseconds. */
export const DEFAULT_REGEX_TIMEOUT_MS = 5000;

/** Thrown when a chunk exceeded the budget; the search of that file stops. */
export class RegexTimeoutError extends Error {}

// Plain JavaScript run with `eval`: the worker needs no bundle entry of its
// own, so the CLI, the library and the extension host all carry it. For each
// chunk it returns the [start, end) character offsets of the lines that match.
const WORKER_SOURCE = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const scan = new RegExp(workerData.source, workerData.flags + 'gm');
const line = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', (text) => {
  const hits = [];
  scan.lastIndex = 0;
  for (;;) {
    const m = scan.exec(text);
    if (!m) break;
    const start = m.index === 0 ? 0 : text.lastIndexOf('\n', m.index - 1) + 1;
    // Past the text's last '\n' there is no line (a pattern matching empty would find one there).
    if (start >= text.length) break;
    let end = text.indexOf('\n', m.index);
    if (end === -1) end = text.length;
    // The scan runs over many lines at once; the verdict is per line.
    if (line.test(text.slice(start, end))) hits.push(start, end);
    if (end >= text.length) break;
    scan.lastIndex = end + 1;
  }
  parentPort.postMessage(hits);
});
`;

/** Matching lines of text chunks, found in a worker with a time budget per chunk. */
export class RegexRunner {
  private worker: Promise<Worker> | undefined;

  constructor(
    private readonly regex: RegExp,
    private readonly timeoutMs: number = DEFAULT_REGEX_TIMEOUT_MS,
  ) {}

  /** [start, end) offsets of the matching lines of `text`, flattened; rejects with RegexTimeoutError. */
  async find(text: string): Promise<number[]> {
    // The budget starts once the thread runs: starting one is not the regex's time.
    this.worker ??= this.start();
    const worker = await this.worker;
    return new Promise<number[]>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      const onMessage = (hits: number[]): void => {
        done();
        resolve(hits);
      };
      const onError = (err: Error): void => {
        done();
        this.worker = undefined;
        reject(err);
      };
      // A runaway regex cannot be interrupted, only its thread ended; the next chunk gets a new one.
      const timer = setTimeout(() => {
        done();
        this.worker = undefined;
        void worker.terminate();
        reject(new RegexTimeoutError(`regular expression gave up after ${this.timeoutMs} ms on one stretch of lines (catastrophic backtracking?); simplify it or install ripgrep`));
      }, this.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage(text);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await (await worker)?.terminate();
  }

  private async start(): Promise<Worker> {
    const worker = newWorker(WORKER_SOURCE, { eval: true, workerData: { source: this.regex.source, flags: this.regex.flags } });
    await once(worker, 'online');
    return worker;
  }
}
