// The obvious alternative to listing blobs: readdir every folder, lstat every
// file. Synchronous, because that is the fastest plain Node walk (the
// promise-per-file version took about twice as long on the same tree).
// `onFile(path)` is called after each file's lstat (parse-floor.mjs reads transcripts there).
// Imported by the benchmarks, and run alone (`node walk-common.mjs DIR`)
// when a benchmark times it as a whole process beside the CLI.
import { lstatSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export function bareWalk(root, onFile) {
  let files = 0;
  let bytes = 0;
  const queue = [root];
  while (queue.length) {
    const dir = queue.pop();
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) queue.push(p);
      else {
        files++;
        bytes += lstatSync(p).size;
        onFile?.(p);
      }
    }
  }
  return { files, bytes };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2]) {
  const { files, bytes } = bareWalk(process.argv[2]);
  process.stdout.write(`${files} files, ${bytes} bytes\n`);
}
