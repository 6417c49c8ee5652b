// `spillway list`: every session and its blobs, as a table or JSON.
import { UsageError, type CliCommand } from '../io';
import { formatBytes, human, json, openCatalog, parseFlags, ROOT_FLAGS, table } from '../format';

export const LIST_USAGE = 'usage: spillway list [--json] [--root DIR]... [--no-default-roots] [--source NAME]...';

export const listCommand: CliCommand = async (argv, io) => {
  const { values, positionals } = parseFlags(argv, ROOT_FLAGS);
  if (values.help) {
    io.stdout(LIST_USAGE + '\n');
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'\n${LIST_USAGE}`);
  const catalog = await openCatalog(values, io);
  const sessions = catalog.sessions();
  if (values.json) {
    json(io, {
      sessions: sessions.map((s) => ({
        key: s.key,
        source: s.source,
        id: s.id,
        title: s.title ?? null,
        cwd: s.cwd ?? null,
        dir: s.dir,
        bytes: s.bytes,
        blobs: s.blobs.map((b) => ({
          path: b.path,
          tool: b.tool ?? null,
          toolCallId: b.toolCallId ?? null,
          args: b.args ?? null,
          bytes: b.bytes,
          createdAt: b.createdAt,
          turn: b.turn ?? null,
          kind: b.kind,
        })),
      })),
      skipped: catalog.skipped(),
    });
    return 0;
  }
  if (sessions.length === 0) {
    io.stdout('No spill sessions found.\n');
  }
  for (const s of sessions) {
    io.stdout(human`${s.source}  ${s.id}${s.title ? `  ${s.title}` : ''}\n  ${s.blobs.length} blob(s), ${formatBytes(s.bytes)}${s.cwd ? `, cwd ${s.cwd}` : ''}\n`);
    const rows = s.blobs.map((b) => ['   ', formatBytes(b.bytes), b.tool ?? (b.kind === 'shell-output' ? '(shell output)' : '?'), b.turn !== undefined ? `turn ${b.turn}` : '', b.args ?? '', b.path]);
    io.stdout(table(rows));
  }
  const total = sessions.reduce((sum, s) => sum + s.bytes, 0);
  io.stdout(`\n${sessions.length} session(s), ${sessions.reduce((n, s) => n + s.blobs.length, 0)} blob(s), ${formatBytes(total)}; skipped ${catalog.skipped()}\n`);
  return 0;
};
