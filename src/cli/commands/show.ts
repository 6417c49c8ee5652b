// `spillway show PATH [--lines A:B]`: print a blob, or a line range of it, without loading it whole.
import { UsageError, type CliCommand, type CliIO } from '../io';
import { human, newCatalog, parseFlags, ROOT_FLAGS } from '../format';
import { readSliceBytes } from '../../catalog/read/slice';

export const SHOW_USAGE = 'usage: spillway show PATH [--lines A:B] [--root DIR]... [--no-default-roots]   (1-based, inclusive)';

export function parseLineRange(text: string): { start: number; end: number } {
  const m = /^(\d+)(?::(\d+)?)?$/.exec(text.trim());
  if (!m) throw new UsageError(`invalid --lines '${text}' (expected A:B, e.g. 100:200)`);
  const start = Number(m[1]);
  const end = m[2] !== undefined ? Number(m[2]) : text.includes(':') ? Number.MAX_SAFE_INTEGER : start;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) {
    throw new UsageError(`invalid --lines '${text}' (line numbers up to ${Number.MAX_SAFE_INTEGER})`);
  }
  if (start < 1 || end < start) throw new UsageError(`invalid --lines '${text}' (1-based, A <= B)`);
  return { start, end };
}

/**
 * Printed this much a call, a slice as the whole blob: one write of a slice of up to 16 MB was held in memory for a
 * slow reader (`| less`), and Linux throttles one large write to a file once much of the page cache is dirty.
 */
const PIECE_BYTES = 64 << 10;

/** `bytes` to stdout a piece at a time, each after a slower reader has caught up (nothing more is read meanwhile). */
async function print(io: CliIO, bytes: Buffer): Promise<void> {
  for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
    io.stdout(bytes.subarray(at, at + PIECE_BYTES));
    const behind = io.caughtUp?.();
    if (behind) await behind;
  }
}

export const showCommand: CliCommand = async (argv, io) => {
  const { values, positionals } = parseFlags(argv, { ...ROOT_FLAGS, lines: { type: 'string' } });
  if (values.help) {
    io.stdout(SHOW_USAGE + '\n');
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`expected one PATH\n${SHOW_USAGE}`);
  const file = positionals[0]!;
  // No scan: the roots only say where a folder swapped for a symlink must refuse the read.
  const catalog = newCatalog(values, io);
  const open = (f: string) => catalog.openForRead(f);
  if (values.lines !== undefined) {
    const { start, end } = parseLineRange(values.lines);
    // The file's own bytes, like cat: not decoded, so invalid UTF-8 is not replaced.
    const slice = await readSliceBytes(file, start, end, { open });
    // Its '\n' after the last line only where the file has one (a cut slice ends a line of its own).
    if (slice.data.length > 0 || slice.endLine >= slice.startLine) await print(io, slice.newlineAfter || slice.truncated ? Buffer.concat([slice.data, Buffer.from('\n')]) : slice.data);
    if (slice.eof) io.stderr(human`spillway show: ${file} ends at line ${slice.lastLine ?? slice.endLine}\n`);
    return 0;
  }
  // Never through a symlink, never blocked on a FIFO: only a regular file is printed.
  const handle = await open(file);
  for await (const chunk of handle.createReadStream()) await print(io, chunk as Buffer);
  return 0;
};
