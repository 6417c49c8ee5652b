// Bundles the desktop suite (test/vscode/*.test.ts) for the extension host:
// one CommonJS file per test under out/vscode-test/, `vscode` left external.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';

const dir = 'test/vscode';
const entryPoints = fs.readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => path.join(dir, f));
await esbuild.build({
  entryPoints,
  outdir: 'out/vscode-test',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  external: ['vscode', 'mocha'],
  logLevel: 'warning',
});
