// The obvious alternative to listing blobs: readdir every folder, stat every
// file. Imported by the benchmarks, and run alone (`node walk-common.mjs DIR`)
// when a benchmark times it as a whole process beside the CLI.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export async function bareWalk(root) {
  let files = 0;
  let bytes = 0;
  const queue = [root];
  while (queue.length) {
    const dir = queue.pop();
    const entries = await fsp.readdir(dir, { withFileTypes: true });
    await Promise.all(
      entries.map(async (e) => {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) queue.push(p);
        else {
          const st = await fsp.stat(p);
          files++;
          bytes += st.size;
        }
      }),
    );
  }
  return { files, bytes };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2]) {
  const { files, bytes } = await bareWalk(process.argv[2]);
  process.stdout.write(`${files} files, ${bytes} bytes\n`);
}
