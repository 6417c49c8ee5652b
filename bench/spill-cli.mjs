// `spillway spill < output` as a user's pipeline runs it (process start to exit, peak RSS) on a generated
// 200 MB build log with its failure line in the middle, beside the obvious alternative on the same bytes in
// the same run: `cat < output > file`, a raw copy to a file. The spill streams an output over 16 MiB to a
// private temp file, renames it into place and digests it from there (docs/engine.md).
// `node bench/spill-cli.mjs 50` runs another size (MB).
import { mkdtempSync, openSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CLI, measure, row } from './catalog-process-common.mjs';

const mb = Number(process.argv[2] ?? 200);
const work = mkdtempSync(path.join(tmpdir(), 'spillway-bench-spill-'));
const input = path.join(work, 'build.log');
const fd = openSync(input, 'w');
const block = Array.from({ length: 10_000 }, (_, i) => `   Compiling crate-${i % 997} v0.${i % 31}.0 (/work/crates/crate-${i % 997})`).join('\n') + '\n';
const blocks = Math.ceil((mb * 1e6) / Buffer.byteLength(block));
for (let i = 0; i < blocks; i++) {
  writeSync(fd, block);
  if (i === blocks >> 1) writeSync(fd, 'error[E0599]: no method named `frob` found for struct `Widget`\n');
}
closeSync(fd);

const shell = (command) => ['-c', `exec ${command}`];
const raw = measure('bash', shell(`cat < '${input}' > '${work}/raw-$RANDOM$RANDOM.txt'`), { runs: 5 });
// A fresh session per run: no dedup hit, every run writes its blob.
const spill = measure('bash', shell(`node '${CLI}' spill --session "bench-$RANDOM$RANDOM" --tool Bash --root '${work}/root' < '${input}'`), { runs: 5 });
console.log(`\nspill of a ${mb} MB build log (${spill.runs} runs each, medians)`);
console.log(row('cat < log > file (a raw copy)', raw));
console.log(row('spillway spill < log', spill));
console.log(`ratio to the raw copy: ${(spill.ms / raw.ms).toFixed(2)}x`);
rmSync(work, { recursive: true, force: true });
