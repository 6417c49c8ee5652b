// The Codex wrapper's path when no capture file can be made (`codex exec -s
// read-only` lets a command write nothing): the command's output comes on
// stdin, its exit status as one line on fd 3 once it has ended, and this
// prints the output whole when small, else the digest (head, failure lines with
// their line numbers, tail) and the exit code, saying that the whole output
// could not be kept. It writes no file and holds a bounded amount of memory.
//
// The status line, not the end of stdin, says the command is done: a
// background job it started may hold the pipe open; then what is already in
// the pipe is read and the digest printed, as the capture path's background
// job would not hold Codex's pipe either.
import * as fs from 'node:fs';
import * as net from 'node:net';
import { DigestStream } from '../spill/digest-stream';
import { MIN_DIGEST_BYTES } from '../spill/policy';

export const NOT_KEPT = 'its whole output could not be kept: the sandbox lets nothing be written';

export function pipeTrailer(status: string | undefined): string {
  return status !== undefined && /^\d+$/.test(status)
    ? `[spillway: the command exited with code ${status}; ${NOT_KEPT}]\n`
    : `[spillway: the command ended (its status is unknown); ${NOT_KEPT}]\n`;
}

export interface PipeDigestIo {
  /** The command's output. */
  input: NodeJS.ReadableStream & { destroy(): void };
  /** The status line's descriptor; undefined: wait for the end of the input. */
  statusFd: number | undefined;
  /** The input's descriptor, read directly for what is already in the pipe when the status comes. */
  inputFd: number | undefined;
  write: (bytes: Buffer | string) => void;
}

/** Writes all of `bytes` to a descriptor (a pipe may take them in parts). */
export function writeAllSync(fd: number, bytes: Buffer | string): void {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  for (let at = 0; at < buf.length; ) {
    try {
      at += fs.writeSync(fd, buf, at, buf.length - at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    }
  }
}

/** The process's own descriptors: stdin and, when open, fd 3 for the status. */
export function processPipeDigestIo(): PipeDigestIo {
  let statusFd: number | undefined = 3;
  try {
    fs.fstatSync(3);
  } catch {
    statusFd = undefined;
  }
  return { input: process.stdin, statusFd, inputFd: 0, write: (bytes) => writeAllSync(1, bytes) };
}

/** `digest INLINE DIGEST_BYTES`: never fails once it has started reading (what it holds is printed). */
export async function runCodexPipeDigest(args: string[], openIo: () => PipeDigestIo): Promise<number> {
  const inline = Number(args[0]);
  const budget = Number(args[1]);
  if (!Number.isFinite(inline) || inline < 0 || !Number.isFinite(budget) || budget <= 0) throw new Error('usage: codex digest INLINE_BYTES DIGEST_BYTES');
  // Opened only now: opening stdin makes its pipe non-blocking, which the wrapper's fallback `cat` could not read.
  const io = openIo();
  const stream = new DigestStream(
    { budgetBytes: Math.max(MIN_DIGEST_BYTES, Math.floor(budget)), toolName: 'Bash', locator: '', notKept: `I${NOT_KEPT.slice(1)}.` },
    Math.floor(inline),
  );
  let failed: unknown;
  const take = (chunk: Buffer): void => {
    if (failed !== undefined) return io.write(chunk);
    try {
      stream.push(chunk);
    } catch (err) {
      failed = err;
      printKept(stream, err, io.write);
      io.write(chunk);
    }
  };
  const status = await readUntilDone(io, take);
  if (failed !== undefined) return 0;
  let result;
  try {
    result = stream.end();
  } catch (err) {
    printKept(stream, err, io.write);
    return 0;
  }
  if ('whole' in result) io.write(result.whole);
  else io.write(`${result.digest}${result.digest.endsWith('\n') ? '' : '\n'}${pipeTrailer(status)}`);
  return 0;
}

function printKept(stream: DigestStream, err: unknown, write: (t: string) => void): void {
  const { head, tail } = stream.kept();
  const why = err instanceof Error ? err.message : String(err);
  write(`${head}${head.endsWith('\n') || head === '' ? '' : '\n'}[spillway: could not digest the output (${why}); what follows is its last bytes kept and the rest]\n${tail}`);
}

/**
 * Feeds the input to `take` until the command is done: its status line has come (then what the pipe already
 * holds is read too) or the input has ended (then the status, written before, is read if it is there).
 */
function readUntilDone(io: PipeDigestIo, take: (chunk: Buffer) => void): Promise<string | undefined> {
  return new Promise((resolve) => {
    let statusText = '';
    let status: net.Socket | undefined;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      io.input.removeListener('data', onData);
      io.input.destroy();
      status?.destroy();
      const line = statusText.split('\n')[0]?.trim();
      resolve(line === '' ? undefined : line);
    };
    const onData = (chunk: Buffer | string): void => take(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    io.input.on('data', onData);
    io.input.on('end', () => {
      if (!statusText.includes('\n') && io.statusFd !== undefined) statusText += readAvailable(io.statusFd).toString('utf8');
      finish();
    });
    io.input.on('error', finish);
    if (io.statusFd === undefined) return;
    try {
      status = new net.Socket({ fd: io.statusFd, readable: true, writable: false });
    } catch {
      return; // no status channel: the end of the input says it
    }
    status.on('error', () => undefined);
    status.on('data', (chunk: Buffer) => {
      statusText += chunk.toString('utf8');
      if (!statusText.includes('\n') || done) return;
      // The command has ended: all it wrote is in the pipe by now (it wrote before the status was written).
      if (io.inputFd !== undefined) {
        const rest = readAvailable(io.inputFd);
        if (rest.length > 0) take(rest);
      }
      finish();
    });
  });
}

/** What a non-blocking descriptor holds now, without waiting (libuv made it non-blocking when it opened it as a stream). */
function readAvailable(fd: number): Buffer {
  const parts: Buffer[] = [];
  const buf = Buffer.allocUnsafe(1 << 16);
  // Bounded: a background job that keeps writing must not keep this reading (a pipe holds 64 KiB, at most 1 MiB).
  for (let i = 0; i < 16; i++) {
    let n: number;
    try {
      n = fs.readSync(fd, buf, 0, buf.length, null);
    } catch {
      break; // EAGAIN: nothing more for now
    }
    if (n === 0) break;
    parts.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(parts);
}
