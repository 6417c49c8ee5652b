// Bundles every entry point: the VS Code extension (cjs, `vscode` external),
// the `spillway` CLI, the library API, and the chart webview script.
import * as esbuild from 'esbuild';
import { chmodSync, copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import * as path from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
// --outdir=DIR builds into DIR instead of dist/ (packaging stages a clean copy there).
const out = process.argv.find((a) => a.startsWith('--outdir='))?.slice('--outdir='.length) ?? 'dist';

const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'info',
};

// The CLI's commands, each a file of its own that dist/cli.js loads when that command runs
// (src/cli/main.ts): `spillway show` does not load ripgrep's runner, nor `list` the spill engine.
const commands = readdirSync('src/cli/commands').filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -'.ts'.length));
const commandsApart = {
  name: 'commands-apart',
  setup(build) {
    // A plain require at run time (an import() of it would start Node's ES module loader: slower).
    build.onResolve({ filter: /^\.\/commands\/[a-z-]+\.js$/ }, (args) => ({ path: path.basename(args.path, '.js'), namespace: 'command' }));
    build.onLoad({ filter: /.*/, namespace: 'command' }, (args) => ({ contents: `module.exports = require('./cli-${args.path}.js');`, loader: 'js' }));
    build.onResolve({ filter: /^\.\/cli-[a-z-]+\.js$/ }, (args) => ({ path: args.path, external: true }));
  },
};

// ES module bundles have no __dirname; the code that finds the CLI beside its bundle (to start `spillway upload`) needs it.
const esmDirname = {
  js: "import { dirname as __spillwayDirname } from 'node:path'; import { fileURLToPath as __spillwayFileUrl } from 'node:url'; const __dirname = __spillwayDirname(__spillwayFileUrl(import.meta.url));",
};

const builds = [
  { ...node, entryPoints: ['src/extension/extension.ts'], outfile: `${out}/extension.js`, external: ['vscode'] },
  { ...node, entryPoints: ['src/cli/main.ts'], outfile: `${out}/cli.js`, banner: { js: '#!/usr/bin/env node' }, plugins: [commandsApart] },
  ...commands.map((name) => ({ ...node, entryPoints: [`src/cli/commands/${name}.ts`], outfile: `${out}/cli-${name}.js` })),
  { ...node, entryPoints: ['src/index.ts'], outfile: `${out}/index.js` },
  // The worker thread a large warm scan checks sessions in (see src/catalog/scan/blob-check.ts), beside the bundles that scan.
  { ...node, entryPoints: ['src/catalog/scan/blob-check-worker.ts'], outfile: `${out}/blob-check-worker.js` },
  // The worker thread a large scan without an index describes sessions in (see src/catalog/scan/describe-ahead.ts).
  { ...node, entryPoints: ['src/catalog/scan/describe-ahead-worker.ts'], outfile: `${out}/describe-ahead-worker.js` },
  // The worker thread the Node engine searches a large literal grep beside (see src/catalog/grep/grep-ahead.ts).
  { ...node, entryPoints: ['src/catalog/grep/grep-ahead-worker.ts'], outfile: `${out}/grep-ahead-worker.js` },
  // The Claude Code hook alone (what `spillway hook install claude-code` wires in): no catalog, fast start.
  { ...node, entryPoints: ['src/adapters/claude-code-hook-main.ts'], outfile: `${out}/hook.js` },
  // The Codex CLI hook alone (what `spillway hook install codex` wires in).
  { ...node, entryPoints: ['src/adapters/codex-hook-main.ts'], outfile: `${out}/codex-hook.js` },
  // Gemini CLI's AfterTool hook alone (what `spillway hook install gemini-cli` wires in).
  { ...node, entryPoints: ['src/adapters/gemini-cli-hook-main.ts'], outfile: `${out}/gemini-cli-hook.js` },
  // The pi extension, loaded by pi from package.json "pi.extensions". ESM: pi's
  // loader takes the default export of an ES module; pi's packages stay external.
  { ...node, format: 'esm', entryPoints: ['src/adapters/pi-extension.ts'], outfile: `${out}/pi-extension.mjs`, banner: esmDirname, external: ['@earendil-works/*'] },
  // The opencode plugin, listed by `spillway hook install opencode` in opencode.json and loaded by opencode's Bun (ESM).
  { ...node, format: 'esm', entryPoints: ['src/adapters/opencode-plugin-main.ts'], outfile: `${out}/opencode-plugin.js`, banner: esmDirname },
  // The chart page (browser, no Node): dist/webview/chart.js + chart.css (uPlot's styles).
  {
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    sourcemap: false,
    minify: production,
    logLevel: 'info',
    entryPoints: ['src/webview/chart.ts'],
    outdir: `${out}/webview`,
  },
];

// The shell prefix Claude Code runs each Bash command through (src/adapters/claude-code-prefix.sh): a
// POSIX shell script, not bundled, beside the hook.js its large-output step starts.
mkdirSync(out, { recursive: true });
copyFileSync('src/adapters/claude-code-prefix.sh', `${out}/claude-code-prefix.sh`);
chmodSync(`${out}/claude-code-prefix.sh`, 0o755);

const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
}
