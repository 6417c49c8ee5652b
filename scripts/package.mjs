#!/usr/bin/env node
// `npm run package`: builds for production into a staging copy (.cache/package/,
// so a concurrent dev build of dist/ cannot leak into it), then writes at the
// repository root what users install before anything is published:
//   spillway.vsix        the VS Code extension (vsce --no-dependencies: esbuild bundles everything)
//   spillway-<v>.tgz     the npm package: the CLI, the Claude Code hook, the pi extension, the library and its typings
// Prints the sizes.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stage = path.join(root, '.cache', 'package');
const vsix = path.join(root, 'spillway.vsix');

fs.rmSync(stage, { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });
execFileSync(process.execPath, [path.join(root, 'esbuild.mjs'), '--production', `--outdir=${path.join(stage, 'dist')}`], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
for (const item of ['package.json', 'README.md', 'LICENSE', '.vscodeignore', 'media']) {
  if (fs.existsSync(path.join(root, item))) fs.cpSync(path.join(root, item), path.join(stage, item), { recursive: true });
}
// The README's relative links (docs/*.md) point into the source tree, which the
// .vsix does not carry and vsce refuses to guess: keep their text and the path.
const readme = path.join(stage, 'README.md');
if (fs.existsSync(readme)) {
  const text = fs.readFileSync(readme, 'utf8');
  fs.writeFileSync(readme, text.replace(/\[([^\]]+)\]\((?![a-z]+:|#)([^)\s]+)\)/gi, (_, label, href) => (label === href ? `\`${href}\`` : `${label} (\`${href}\`)`)));
}
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
execFileSync(process.execPath, [vsce, 'package', '--no-dependencies', '--allow-missing-repository', '--out', vsix], { cwd: stage, stdio: ['ignore', 'inherit', 'inherit'] });

// The library's typings (package.json "types"), then the npm tarball of the staged package.
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.types.json', '--outDir', path.join(stage, 'dist', 'types')], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', root], { cwd: stage, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
const tarball = path.join(root, packed[0].filename);

const size = (p) => fs.statSync(p).size;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log(
  `extension.js ${kb(size(path.join(stage, 'dist', 'extension.js')))} · webview/chart.js ${kb(size(path.join(stage, 'dist', 'webview', 'chart.js')))} · ` +
    `webview/chart.css ${kb(size(path.join(stage, 'dist', 'webview', 'chart.css')))} · spillway.vsix ${kb(size(vsix))} · ${path.basename(tarball)} ${kb(size(tarball))}`,
);
