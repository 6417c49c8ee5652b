// `spillway grep PATTERN`: search every blob (ripgrep when found, else Node).
import { UsageError, type CliCommand } from '../io';
import { human, newCatalog, parseFlags, Pieces, reportProblems, ROOT_FLAGS } from '../format';
import type { GrepMatch } from '../../catalog/types';

export const GREP_USAGE =
  'usage: spillway grep PATTERN [--regex] [-i | -S] [--max N] [--max-per-blob N] [--json] [--root DIR]... [--no-default-roots] [--engine auto|rg|node] [--rg PATH]';

export const grepCommand: CliCommand = async (argv, io) => {
  const { values, positionals } = parseFlags(argv, {
    ...ROOT_FLAGS,
    regex: { type: 'boolean' },
    'ignore-case': { type: 'boolean', short: 'i' },
    'smart-case': { type: 'boolean', short: 'S' },
    max: { type: 'string' },
    'max-per-blob': { type: 'string' },
    engine: { type: 'string' },
    rg: { type: 'string' },
  });
  if (values.help) {
    io.stdout(GREP_USAGE + '\n');
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] === '') throw new UsageError(`expected one PATTERN\n${GREP_USAGE}`);
  const max = values.max !== undefined ? Number(values.max) : 1000;
  if (!Number.isInteger(max) || max < 1) throw new UsageError(`invalid --max '${values.max}' (a positive integer)`);
  const perBlob = values['max-per-blob'] !== undefined ? Number(values['max-per-blob']) : 0;
  if (values['max-per-blob'] !== undefined && (!Number.isInteger(perBlob) || perBlob < 1)) throw new UsageError(`invalid --max-per-blob '${values['max-per-blob']}' (a positive integer)`);
  // A ripgrep named with --rg is the one asked for: one that cannot run is an error, not a quiet search without it.
  const engine = values.engine ?? (values.rg !== undefined ? 'rg' : 'auto');
  if (engine !== 'auto' && engine !== 'rg' && engine !== 'node') throw new UsageError(`invalid --engine '${engine}' (auto, rg or node)`);
  const catalog = newCatalog(values, io);
  // Matches go out as they are found, a piece at a time, not held to the end (--json: laid out as JSON.stringify of the whole would).
  const pieces = new Pieces(io);
  let written = 0;
  const jsonMatch = (match: GrepMatch): boolean => pieces.add(`${written++ === 0 ? '{\n  "matches": [' : ','}\n    ${JSON.stringify(match, null, 2).replace(/\n/g, '\n    ')}`);
  let summary;
  try {
    // ripgrep starts on the folders the index names while the catalog scans.
    summary = await catalog.scanAndGrep(
      {
        pattern: positionals[0]!,
        regex: values.regex,
        ignoreCase: values['ignore-case'],
        smartCase: values['smart-case'],
        maxResults: max,
        maxPerBlob: perBlob,
        engine,
        rgPath: values.rg,
      },
      (match) => {
        if (values.json) return jsonMatch(match) ? io.caughtUp?.() : undefined;
        // Many matches to a write: 10,000 matches were 10,000 write calls.
        if (!pieces.add(human`${match.path}:${match.line}:${match.text}\n`)) pieces.flushSoon();
        return io.caughtUp?.(); // the search waits for a slower reader
      },
      // Blob sizes are not needed to search: a grown blob is read as it is now.
      { statBlobs: false },
    );
  } catch (err) {
    const message = (err as Error).message;
    if (/pattern|regular expression|ripgrep/.test(message)) throw new UsageError(message);
    throw err;
  } finally {
    // The matches found before the search ended (or failed), ahead of any message on standard error.
    if (!values.json) pieces.flush();
  }
  reportProblems(catalog, io);
  for (const e of summary.errors) io.stderr(human`spillway grep: ${e.path}: ${e.message}
`);
  const capped = summary.cappedBlobs ?? [];
  if (values.json) {
    const rest = JSON.stringify({ truncated: summary.truncated, cappedBlobs: capped, engine: summary.engine }, null, 2).slice(1); // without its '{'
    pieces.add(`${written > 0 ? '\n  ],' : '{\n  "matches": [],'}${rest}\n`);
    pieces.flush();
  } else {
    for (const blob of capped) io.stderr(human`spillway grep: ${blob}: more than ${perBlob} matches, the first ${perBlob} shown (--max-per-blob)
`);
    if (summary.truncated) io.stderr(`spillway grep: stopped at ${max} matches (--max)
`);
  }
  // As grep and ripgrep: 1 when nothing matched, so `spillway grep X && ...` reads as it does with them.
  return summary.matches > 0 ? 0 : 1;
};
