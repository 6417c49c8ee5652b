// What a CLI command may touch, so tests can run commands in-process too.
export interface CliIO {
  stdout: (text: string | Uint8Array) => void;
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
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    caughtUp: () => {
      if (process.stdout.writableLength < BACKLOG_BYTES) return undefined;
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
