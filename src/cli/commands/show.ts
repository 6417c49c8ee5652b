// `spillway show PATH [--lines A:B]`: print a blob, or a line range of it, without loading it whole.
import { UsageError, type CliCommand } from '../io';
import { parseFlags } from '../format';
import { openRegularFile } from '../../spill/regular-file';
import { readSlice } from '../../catalog/slice';

export const SHOW_USAGE = 'usage: spillway show PATH [--lines A:B]   (1-based, inclusive)';

export function parseLineRange(text: string): { start: number; end: number } {
  const m = /^(\d+)(?::(\d+)?)?$/.exec(text.trim());
  if (!m) throw new UsageError(`invalid --lines '${text}' (expected A:B, e.g. 100:200)`);
  const start = Number(m[1]);
  const end = m[2] !== undefined ? Number(m[2]) : text.includes(':') ? Number.MAX_SAFE_INTEGER : start;
  if (start < 1 || end < start) throw new UsageError(`invalid --lines '${text}' (1-based, A <= B)`);
  return { start, end };
}

export const showCommand: CliCommand = async (argv, io) => {
  const { values, positionals } = parseFlags(argv, { lines: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.stdout(SHOW_USAGE + '\n');
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`expected one PATH\n${SHOW_USAGE}`);
  const file = positionals[0]!;
  if (values.lines !== undefined) {
    const { start, end } = parseLineRange(values.lines);
    const slice = await readSlice(file, start, end);
    if (slice.text !== '' || slice.endLine >= slice.startLine) io.stdout(slice.text + '\n');
    if (slice.eof) io.stderr(`spillway show: ${file} ends at line ${Math.max(slice.endLine, start - 1)}\n`);
    return 0;
  }
  // Never through a symlink, never blocked on a FIFO: only a regular file is printed.
  const handle = await openRegularFile(file);
  await new Promise<void>((resolve, reject) => {
    const stream = handle.createReadStream({ encoding: 'utf8' });
    stream.on('data', (chunk) => io.stdout(chunk as string));
    stream.on('error', reject);
    stream.on('end', resolve);
  });
  return 0;
};
