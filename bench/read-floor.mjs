// The least a Node process can do to grep a literal: read every file under a
// folder into one reused buffer and count the literal's occurrences with
// Buffer.indexOf, nothing else (no index, no line numbers, no output but the
// count). `node bench/read-floor.mjs DIR NEEDLE`; timed beside rg and
// `spillway grep` by catalog-grep-cli.mjs, as the floor of a Node engine.
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import * as path from 'node:path';

const [root, literal] = process.argv.slice(2);
const needle = Buffer.from(literal);
const buffer = Buffer.allocUnsafe(2 << 20);
let hits = 0;
for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
  if (!entry.isFile()) continue;
  const fd = openSync(path.join(entry.parentPath ?? entry.path, entry.name), 'r');
  // Chunks overlap by the needle's length less one, so a match across two reads is found once.
  for (let pos = 0, keep = 0; ; ) {
    const got = readSync(fd, buffer, keep, buffer.length - keep, pos);
    if (got === 0) break;
    const end = keep + got;
    const read = buffer.subarray(0, end);
    for (let at = read.indexOf(needle); at !== -1; at = read.indexOf(needle, at + 1)) hits++;
    pos += got;
    keep = Math.min(needle.length - 1, end);
    buffer.copyWithin(0, end - keep, end);
  }
  closeSync(fd);
}
process.stdout.write(`${hits}\n`);
