// What a CLI command may touch, so tests can run commands in-process too.
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads all of standard input (empty when there is none). */
  readStdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
}

export type CliCommand = (argv: string[], io: CliIO) => Promise<number>;

/** Thrown for bad arguments: printed with the usage line, exit code 2. */
export class UsageError extends Error {}

export function processIO(): CliIO {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => {
      if (process.stdin.isTTY) return '';
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    env: process.env,
  };
}
