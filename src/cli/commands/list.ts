// `spillway list`: every session and its blobs, as a table or JSON.
import { UsageError, type CliCommand } from '../io';
import { formatBytes, human, openCatalog, parseFlags, ROOT_FLAGS, table } from '../format';

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
    // One session at a time: the output of 100,000 blobs is never one string.
    // Each blob on one line: a third less output to write and to read than indenting every field.
    io.stdout('{\n  "sessions": [');
    const indent = '\n    ';
    sessions.forEach((s, i) => {
      const fields = { key: s.key, source: s.source, id: s.id, title: s.title ?? null, cwd: s.cwd ?? null, dir: s.dir, bytes: s.bytes };
      const head = JSON.stringify(fields, null, 2).slice(0, -2).replace(/\n/g, indent); // without its closing "\n}"
      const blobs = s.blobs.map((b) =>
        JSON.stringify({ path: b.path, tool: b.tool ?? null, toolCallId: b.toolCallId ?? null, args: b.args ?? null, bytes: b.bytes, createdAt: b.createdAt, turn: b.turn ?? null, kind: b.kind }),
      );
      const list = blobs.length > 0 ? `${indent}    ${blobs.join(`,${indent}    `)}${indent}  ` : '';
      io.stdout(`${i === 0 ? '' : ','}${indent}${head},${indent}  "blobs": [${list}]${indent}}`);
    });
    io.stdout(`${sessions.length > 0 ? '\n  ' : ''}],\n  "skipped": ${catalog.skipped()}\n}\n`);
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
