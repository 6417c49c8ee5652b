// A scan without an index describes every session: it reads each transcript,
// lists each blob folder and stats each blob, on one core (most of a cold
// `list`). A worker thread describes sessions from the last
// one back while the scan goes from the first, and hands each back as the line
// the index stores for it, written to the index as it comes (held until the
// scan reached them, they swelled the heap's peak). The scan still settles sessions in its own order (that order
// decides which of two sessions lists a blob both name), so what it lists is
// what one thread lists. Each session is described once, by whichever thread
// takes it first.
import * as path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { describeClaim, type DescribeEnv } from './describe';
import { FREE, startWorker, TAKEN_HERE, TAKEN_THERE } from '../shared/from-both-ends';
import { workerThreads } from '../shared/workers';
import { encodeEntry, lastUpdate } from '../index/index-file';
import type { SessionClaim } from '../sources/source';
import { sourcesNamed } from '../sources';
import { TranscriptCache } from '../transcripts/transcripts';
import type { KnownRoot, SourceName } from '../types';

/** What the worker is handed: the sessions in the scan's order, and what describing needs. */
export interface DescribeAheadJob {
  claims: SessionClaim[];
  sources: SourceName[];
  roots: KnownRoot[];
  /** Each claim's folders as the scan's walk stamped them (a stamp taken before the folder was read). */
  stamped: Array<Array<[string, string]>>;
  /** One Int32 per claim, FREE until a thread takes it (from-both-ends.ts). */
  state: SharedArrayBuffer;
}

/** A session the worker described (`at`: its number in the job): its index line (with its '\n') and last update, why it could not be read, the transcript bytes read. */
interface Described {
  at: number;
  line: string;
  updated: number;
  problem?: string;
  transcriptBytes: number;
}

/** A session the worker described, as the scan takes it: its line's number in the index being written. */
export type DescribedThere = Omit<Described, 'line' | 'updated'>;

/** Where a line the worker made goes: into the index being written, for the scan's session `i`; returns its line number. */
export type KeepLine = (i: number, line: string, updated: number) => number;

/** The worker's script beside this bundle (dist/); absent when running from the sources (tests name a built one). */
export const DEFAULT_DESCRIBE_WORKER = path.join(__dirname, 'describe-ahead-worker.js');

/**
 * A worker is started once the sessions left would take this thread this long at its pace so far: below it, the
 * worker's start and two threads sharing the cores cost more than the second thread saves.
 */
export const DESCRIBE_AHEAD_MIN_MS = 800;

/**
 * With no index, a walk of the roots still going after this long starts a worker meanwhile. Describing a session takes
 * several times as long as walking to it, so such a walk foretells more than DESCRIBE_AHEAD_MIN_MS of describing.
 */
export const DESCRIBE_AHEAD_WALK_MS = 100;

/**
 * How long this thread describes before its pace is trusted to foresee the rest: its first sessions are slower (its
 * code is not compiled yet), and judged after a few of them the whole looked longer than it was.
 */
const PACE_AFTER_MS = 100;

/**
 * Whether the sessions after the first `done` of `total` are worth a worker: at the pace of the first `elapsedMs`, they
 * would take at least `minMs` more here (0: always, while two are left).
 */
export function worthAWorker(done: number, total: number, elapsedMs: number, minMs = DESCRIBE_AHEAD_MIN_MS): boolean {
  if (total - done < 2) return false;
  if (minMs <= 0) return true;
  return elapsedMs >= PACE_AFTER_MS && (elapsedMs / done) * (total - done) >= minMs;
}

/** A worker started before it has sessions to describe (so its start overlaps the walk), waiting for its job. */
export interface WaitingWorker {
  worker: Worker;
  /** It failed or ended before it had its job. */
  gone: boolean;
}

/** Start a worker that waits for its job (DescribeAhead.start); undefined when it cannot start. */
export function startWaiting(workerFile: string): WaitingWorker | undefined {
  // A small young generation: the worker holds one session at a time, so it peaks lower and is no slower.
  const worker = startWorker(workerFile, { resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  if (!worker) return undefined;
  const waiting: WaitingWorker = { worker, gone: false };
  const gone = (): void => void (waiting.gone = true);
  worker.once('error', gone);
  worker.once('exit', gone);
  return waiting;
}

/** Sessions a worker describes from the last one back; `take(i)` is asked in the scan's order. */
export class DescribeAhead {
  private readonly done = new Map<number, DescribedThere | undefined>();
  private readonly waiting = new Map<number, (there: DescribedThere | undefined) => void>();
  private stopped = false;
  private handedOver = 0;

  private constructor(
    private readonly state: Int32Array,
    private readonly worker: Worker,
    /** The scan's number of the worker's first session. */
    private readonly from: number,
    keep: KeepLine,
  ) {
    worker.on('message', ({ at, line, updated, problem, transcriptBytes }: Described) => {
      const i = at + from;
      let there: DescribedThere | undefined;
      try {
        there = { at: keep(i, line, updated), transcriptBytes, ...(problem ? { problem } : {}) };
      } catch {
        // Not kept (the index could not be written): the scan describes it, and meets the failure itself.
      }
      const waiter = this.waiting.get(i);
      this.waiting.delete(i);
      if (waiter) waiter(there);
      else this.done.set(i, there);
    });
    // Stopped or failed: what it took and did not hand back is described here.
    const gone = (): void => {
      this.stopped = true;
      for (const waiter of this.waiting.values()) waiter(undefined);
      this.waiting.clear();
    };
    worker.once('error', gone);
    worker.once('exit', gone);
  }

  /**
   * Start the worker on the scan's sessions from `from` on (`job.claims` holds those alone; the ones before are this
   * thread's), each line it makes handed to `keep` as it comes, by `waiting` (startWaiting: during the walk, or just
   * now); undefined when that worker could not start or is gone.
   */
  static start(job: Omit<DescribeAheadJob, 'state'>, from: number, waiting: WaitingWorker | undefined, keep: KeepLine): DescribeAhead | undefined {
    if (!waiting || waiting.gone) return undefined;
    const state = new SharedArrayBuffer(4 * job.claims.length);
    const ahead = new DescribeAhead(new Int32Array(state), waiting.worker, from, keep);
    waiting.worker.postMessage({ ...job, state } satisfies DescribeAheadJob);
    return ahead;
  }

  /** The scan's session `i` as the worker described it (its line kept); undefined when this thread is to describe it (it is then taken here). */
  async take(i: number): Promise<DescribedThere | undefined> {
    if (i < this.from || Atomics.compareExchange(this.state, i - this.from, FREE, TAKEN_HERE) === FREE) return undefined;
    const there = this.done.has(i) || this.stopped ? this.done.get(i) : await new Promise<DescribedThere | undefined>((resolve) => this.waiting.set(i, resolve));
    this.done.delete(i);
    if (there) this.handedOver++;
    return there;
  }

  /** How many sessions the worker described and the scan took. */
  get describedByWorker(): number {
    return this.handedOver;
  }

  /** Stop the worker (it may be describing a session nobody will take). */
  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

/** The worker's side: describe each session nobody took, from the last one back, until it meets the scan. */
export async function describeFromTheEnd(job: DescribeAheadJob): Promise<void> {
  const state = new Int32Array(job.state);
  const transcripts = new TranscriptCache();
  const env: Omit<DescribeEnv, 'stamped'> = { sources: sourcesNamed(job.sources), roots: job.roots, transcripts, logger: { warn: () => undefined }, keepTranscripts: false, listing: true };
  for (let i = job.claims.length - 1; i >= 0; i--) {
    // The scan takes sessions in order: once it has one, it has every one before it.
    if (Atomics.compareExchange(state, i, FREE, TAKEN_THERE) !== FREE) return;
    const stamped = new Map(job.stamped[i]);
    const before = transcripts.bytesRead;
    const { indexed, problem } = await describeClaim(job.claims[i]!, { ...env, stamped: (folder) => stamped.get(folder) });
    const described: Described = { at: i, line: encodeEntry(indexed), updated: lastUpdate(indexed), transcriptBytes: transcripts.bytesRead - before, ...(problem ? { problem } : {}) };
    workerThreads().parentPort?.postMessage(described);
  }
}
