// `spillway grep PATTERN`: search every blob (ripgrep when found, else Node).
import { UsageError, type CliCommand } from '../io';
import { human, json, openCatalog, parseFlags, ROOT_FLAGS } from '../format';
import type { GrepMatch } from '../../catalog/types';

export const GREP_USAGE =
  'usage: spillway grep PATTERN [--regex] [-i] [--max N] [--json] [--root DIR]... [--no-default-roots] [--engine auto|rg|node] [--rg PATH]';

export const grepCommand: CliCommand = async (argv, io) => {
  const { values, positionals } = parseFlags(argv, {
    ...ROOT_FLAGS,
    regex: { type: 'boolean' },
    'ignore-case': { type: 'boolean', short: 'i' },
    max: { type: 'string' },
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
  const engine = values.engine ?? 'auto';
  if (engine !== 'auto' && engine !== 'rg' && engine !== 'node') throw new UsageError(`invalid --engine '${engine}' (auto, rg or node)`);
  const catalog = await openCatalog(values, io);
  const matches: GrepMatch[] = [];
  let summary;
  try {
    summary = await catalog.grep(
      { pattern: positionals[0]!, regex: values.regex, ignoreCase: values['ignore-case'], maxResults: max, engine, rgPath: values.rg },
      (match) => {
        if (values.json) matches.push(match);
        else io.stdout(human`${match.path}:${match.line}:${match.text}\n`);
      },
    );
  } catch (err) {
    const message = (err as Error).message;
    if (/pattern|regular expression|ripgrep/.test(message)) throw new UsageError(message);
    throw err;
  }
  for (const e of summary.errors) io.stderr(human`spillway grep: ${e.path}: ${e.message}\n`);
  if (values.json) json(io, { matches, truncated: summary.truncated, engine: summary.engine });
  else if (summary.truncated) io.stderr(`spillway grep: stopped at ${max} matches (--max)\n`);
  return 0;
};
