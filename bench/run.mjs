// `npm run bench`: build once, then run every bench/*.mjs (shared helpers end
// in -common.mjs and are skipped). `npm run bench -- recovery` runs only the
// benchmarks whose file name contains "recovery".
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2] ?? '';
execFileSync(process.execPath, [path.join(here, '..', 'esbuild.mjs')], { stdio: 'inherit', cwd: path.join(here, '..') });
const files = readdirSync(here)
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs' && !f.endsWith('-common.mjs') && f.includes(filter))
  .sort();
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  execFileSync(process.execPath, [path.join(here, f)], { stdio: 'inherit' });
}
