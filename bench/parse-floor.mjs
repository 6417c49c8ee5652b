// What a Node process does at least to list a tree of Claude Code sessions
// with no index when it parses every line whole: the bare walk (readdirSync + lstatSync of every file), and every
// transcript (`*.jsonl`) read 256 KB at a time with each line JSON.parse'd,
// nothing else (no description, no index, no output but counts).
// `node bench/parse-floor.mjs DIR`; timed beside the walk and a cold
// `spillway list --json` by catalog-list.mjs.
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { bareWalk } from './walk-common.mjs';

const buffer = Buffer.allocUnsafe(256 << 10);
let lines = 0;
const { files, bytes } = bareWalk(process.argv[2], (file) => {
  if (!file.endsWith('.jsonl')) return;
  const fd = openSync(file, 'r');
  const decoder = new StringDecoder('utf8'); // a character split between two reads stays whole
  let pending = '';
  for (let got; (got = readSync(fd, buffer, 0, buffer.length, null)) > 0; ) {
    const text = pending + decoder.write(buffer.subarray(0, got));
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; start = nl + 1, nl = text.indexOf('\n', start)) {
      JSON.parse(text.slice(start, nl));
      lines++;
    }
    pending = text.slice(start);
  }
  closeSync(fd);
});
process.stdout.write(`${files} files, ${bytes} bytes, ${lines} transcript lines parsed\n`);
