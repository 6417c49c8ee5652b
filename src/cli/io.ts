// What a CLI command may touch, so tests can run commands in-process too.
export interface CliIO {
  stdout: (text: string | Uint8Array) => void;
  stderr: (text: string) => void;
  /**
   * Undefined while standard output keeps up; else settles once a slower reader (a pipe to `jq`) has
   * taken what was written. Long outputs wait on it: otherwise all of it queues in memory.
   */
  caughtUp?: () => Promise<void> | undefined;
  /** Reads all of standard input as bytes (empty when there is none). */
  readStdin: () => Promise<Buffer>;
  env: NodeJS.ProcessEnv;
}

export type CliCommand = (argv: string[], io: CliIO) => Promise<number>;

/** Thrown for bad arguments: printed with the usage line, exit code 2. */
export class UsageError extends Error {}

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
    readStdin: async () => {
      if (process.stdin.isTTY) return Buffer.alloc(0);
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    env: process.env,
  };
}
