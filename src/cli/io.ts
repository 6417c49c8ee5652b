// What a CLI command may touch, so tests can run commands in-process too.
export interface CliIO {
  /** Writes to standard output; true when it took `text` whole (the bytes may then be used again), else it may still hold them. */
  stdout: (text: string | Uint8Array) => boolean | void;
  stderr: (text: string) => void;
  /**
   * Undefined while standard output keeps up; else settles once a slower reader (a pipe to `jq`) has
   * taken what was written. Long outputs wait on it: otherwise all of it queues in memory.
   */
  caughtUp?: () => Promise<void> | undefined;
  /** Standard input as it arrives (nothing when it is a terminal). */
  stdin: () => AsyncIterable<Buffer>;
  env: NodeJS.ProcessEnv;
}

export type CliCommand = (argv: string[], io: CliIO) => Promise<number>;

/** Standard input of a command given none. */
export async function* noInput(): AsyncGenerator<Buffer> {}

/** All of what `chunks` still yields, as one buffer. */
export async function readAll(chunks: AsyncIterable<Buffer> | AsyncIterator<Buffer>): Promise<Buffer> {
  const all: Buffer[] = [];
  const it = Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : chunks;
  for (let next = await it.next(); !next.done; next = await it.next()) all.push(next.value);
  return Buffer.concat(all);
}

/** Thrown for bad arguments: printed with the usage line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Known by name, not by class: each built command (dist/cli-NAME.js) carries its own copy of the class. */
export function isUsageError(err: unknown): boolean {
  return err instanceof Error && err.name === 'UsageError';
}

/** What standard output may hold for a slower reader before a long output waits (then until all of it is taken). */
const BACKLOG_BYTES = 1 << 20;
/** How much may be written, while a reader is behind, between two turns of the event loop that hand it more. */
const TURN_BYTES = 64 << 10;

/**
 * The real process's streams. A reader that goes away (`spillway list | head -1`)
 * ends the command quietly with exit 0, as if the rest had been read, instead
 * of an EPIPE stack trace.
 */
export function processIO(): CliIO {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      throw err;
    });
  }
  let drained: Promise<void> | undefined;
  let sinceTurn = 0;
  return {
    stdout: (text) => {
      sinceTurn += text.length;
      process.stdout.write(text);
      // Nothing left queued: written through (a file, a terminal, a pipe with room), so not held.
      return process.stdout.writableLength === 0;
    },
    stderr: (text) => process.stderr.write(text),
    caughtUp: () => {
      const queued = process.stdout.writableLength;
      if (queued === 0) return undefined;
      // A pipe took less than was written (its reader is behind): a turn of the event loop, once per TURN_BYTES
      // written, hands the reader more while the next piece is made. Without it the pipe stood empty while a whole
      // backlog was made.
      if (queued < BACKLOG_BYTES) {
        if (sinceTurn < TURN_BYTES) return undefined;
        sinceTurn = 0;
        return new Promise((resolve) => setImmediate(resolve));
      }
      // One wait for every write until the next 'drain' (a listener per match would pile up by the thousand).
      drained ??= new Promise((resolve) => {
        process.stdout.once('drain', () => {
          drained = undefined;
          resolve();
        });
      });
      return drained;
    },
    stdin: () => (process.stdin.isTTY ? noInput() : (process.stdin as AsyncIterable<Buffer>)),
    env: process.env,
  };
}
