// `spillway list`: every session and its blobs, as a table or JSON.
import type { SessionJson } from '../../catalog/index/session-json';
import { UsageError, type CliCommand } from '../io';
import { formatBytes, human, newCatalog, parseFlags, Pieces, reportProblems, ROOT_FLAGS, tableLines } from '../format';
import { isLeftoversKey } from '../../catalog/sources/leftovers';

export const LIST_USAGE = 'usage: spillway list [--json] [--root DIR]... [--no-default-roots] [--source NAME]...';

export const listCommand: CliCommand = async (argv, io) => {
  const { values, positionals } = parseFlags(argv, ROOT_FLAGS);
  if (values.help) {
    io.stdout(LIST_USAGE + '\n');
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'\n${LIST_USAGE}`);
  const catalog = newCatalog(values, io);
  // Sessions are read back from the index one at a time: 100,000 blobs are never all in memory.
  const listing = await catalog.scanSessions({ keepListed: values.json === true });
  reportProblems(catalog, io);
  // One output a piece at a time (64 K characters), across sessions: 50,000 sessions were 50,000 writes.
  const pieces = new Pieces(io);
  try {
    if (values.json) {
      // Each blob on one line: a third less output to write and to read than indenting every field.
      pieces.add('{\n  "sessions": [');
      let first = true;
      // Temps of spills killed mid-write are no blobs: listed apart, each folder's as a session of its own.
      const partial: SessionJson[] = [];
      await listing.forEachJson(async (s) => {
        if (isLeftoversKey(s.fields.key)) return void partial.push(s);
        await pieces.addAllSplit(sessionLines(s, first ? '' : ','));
        first = false;
      });
      pieces.add(`${first ? '' : '\n  '}],\n  "partial": [`);
      for (const [i, s] of partial.entries()) await pieces.addAllSplit(sessionLines(s, i > 0 ? ',' : ''));
      pieces.add(`${partial.length > 0 ? '\n  ' : ''}],\n  "skipped": ${listing.skipped}\n}\n`);
      return 0;
    }
    if (listing.sessions === 0) pieces.add('No spill sessions found.\n');
    await listing.forEach(async (s) => {
      const head = human`${s.source}  ${s.id}${s.title ? `  ${s.title}` : ''}\n  ${s.blobs.length} blob(s), ${formatBytes(s.bytes)}${s.cwd ? `, cwd ${s.cwd}` : ''}\n`;
      const rows = s.blobs.map((b) => ['   ', formatBytes(b.bytes), b.tool ?? (b.kind === 'shell-output' ? '(shell output)' : b.kind === 'partial' ? '(partial: killed mid-write)' : '?'), b.turn !== undefined ? `turn ${b.turn}` : '', b.args ?? '', b.path]);
      await pieces.addAll([head, ...tableLines(rows)]);
    });
    pieces.add(`\n${listing.sessions} session(s), ${listing.blobs} blob(s), ${formatBytes(listing.bytes)}; skipped ${listing.skipped}\n`);
    return 0;
  } finally {
    pieces.flush();
    await listing.close();
  }
};

const INDENT = '\n    ';
const BLOB_SEPARATOR = `,${INDENT}    `;
const BLOBS_PER_PART = 256;

/** One session of `list --json`, after `before` (a comma, or nothing): its fields, then each blob on a line of its own. */
function* sessionLines(s: SessionJson, before: string): Iterable<string> {
  const { key, source, id, title, cwd, dir, bytes } = s.fields;
  const head = JSON.stringify({ key, source, id, title, cwd, dir, bytes }, null, 2).slice(0, -2).replace(/\n/g, INDENT); // without its closing "\n}"
  yield `${before}${INDENT}${head},${INDENT}  "blobs": [`;
  // Blobs joined a few hundred at a time (split across pieces as they fill): a part each, not one per blob, while a
  // session of 100,000 blobs still never becomes one string.
  for (let i = 0; i < s.blobs.length; i += BLOBS_PER_PART) {
    yield `${i > 0 ? ',' : ''}${INDENT}    ${s.blobs.slice(i, i + BLOBS_PER_PART).join(BLOB_SEPARATOR)}`;
  }
  yield `${s.blobs.length > 0 ? `${INDENT}  ` : ''}]${INDENT}}`;
}
