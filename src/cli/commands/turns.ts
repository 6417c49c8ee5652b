// `spillway turns SESSION_ID`: per-API-call prompt tokens, deltas, compactions, spills, and the tokens saved.
import { mayName } from '../../catalog/catalog';
import type { SessionInfo, TurnSeries } from '../../catalog/types';
import { UsageError, type CliCommand, type CliIO } from '../io';
import { human, json, newCatalog, parseFlags, reportProblems, ROOT_FLAGS, sessionNamed, table } from '../format';

export const TURNS_USAGE = 'usage: spillway turns SESSION_ID [--json] [--root DIR]... [--no-default-roots]\n       spillway turns SESSION_ID --root s3://BUCKET/PREFIX [--json]';

export const turnsCommand: CliCommand = async (argv, io) => {
  const { values, positionals } = parseFlags(argv, ROOT_FLAGS);
  if (values.help) {
    io.stdout(TURNS_USAGE + '\n');
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`expected one SESSION_ID\n${TURNS_USAGE}`);
  const name = positionals[0]!;
  // The streaming scan `list` uses: only the sessions the name may mean are kept.
  const catalog = newCatalog(values, io);
  const listing = await catalog.scanSessions();
  reportProblems(catalog, io);
  let session: SessionInfo;
  let series: TurnSeries | undefined;
  try {
    const candidates: SessionInfo[] = [];
    await listing.forEach((s) => {
      if (mayName(name, s)) candidates.push(s);
    });
    const found = sessionNamed('turns', name, candidates, io);
    if (!found) return 1;
    session = found;
    series = await listing.turns(session);
  } finally {
    await listing.close();
  }
  if (!series) {
    io.stderr(human`spillway turns: the session '${session.key}' could not be read again (changed or gone since the scan)\n`);
    return 1;
  }
  printTurns(io, session, series, values.json === true);
  return 0;
};

/** A session's series as a table and the tokens-saved line, or as JSON (a folder's or a bucket's session alike). */
export function printTurns(io: CliIO, session: Pick<SessionInfo, 'key' | 'source' | 'id' | 'title'>, series: TurnSeries, asJson: boolean): void {
  if (asJson) {
    json(io, { session: { key: session.key, source: session.source, id: session.id, title: session.title ?? null }, ...series });
    return;
  }
  io.stdout(human`${session.source}  ${session.id}${session.title ? `  ${session.title}` : ''}\n`);
  if (series.points.length === 0) io.stdout('No API calls with usage in the transcript.\n');
  const rows = [['#', 'time', 'prompt', 'delta', 'output', 'drop', 'spills', 'largest part']];
  for (const p of series.points) {
    const largest = [...p.parts].sort((a, b) => b.tokens - a.tokens)[0];
    const part = largest ? `${largest.tool ?? largest.kind}${largest.spilled ? ' (spilled)' : ''} +${largest.tokens}` : '';
    rows.push([String(p.index), p.timestamp, String(p.promptTokens), (p.delta >= 0 ? '+' : '') + p.delta, String(p.outputTokens), p.drop ? p.drop.kind : '', String(p.blobs.length || ''), part]);
  }
  if (series.points.length > 0) io.stdout(table(rows));
  const saved = series.tokensSaved;
  io.stdout(
    `\nTokens saved by Spillway (estimate, ${saved.charsPerToken} chars/token, against what the agent would have shown without it): ` +
      `context now ${saved.contextTokens} smaller; ${saved.tokens} input tokens not re-sent over ${saved.calls} call(s)` +
      (saved.agentSpills ? `; ${saved.agentSpills} blob(s) are the agent's own spills, not counted` : '') +
      (saved.blobsWithoutTurn ? ` (${saved.blobsWithoutTurn} blob(s) without a known turn not counted)` : '') +
      '\n',
  );
}
