#!/usr/bin/env node
// `npm start`: a real VS Code with Spillway loaded, on your real agent folders.
// - The desktop `code` when it is installed: a new window with
//   --extensionDevelopmentPath pointing at this checkout.
// - Otherwise code-server (installed by scripts/e2e-setup.mjs into .cache/)
//   on 127.0.0.1, with the URL printed; open it in any browser.
// Options: --code-server (skip the desktop check), --port N (default 8417).
// SPILLWAY_START_DIR: where code-server keeps its state (default .cache/start).
// Prints only what a user needs (progress, the address); code-server's own
// output (its missing vsda.js, an unreachable extension gallery, ...) goes to
// .cache/logs/start.log, whose tail is shown if it fails.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureE2eEnvironment } from './e2e-setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const forceServer = args.includes('--code-server');
const portArg = args.indexOf('--port');
const port = portArg >= 0 ? Number(args[portArg + 1]) : Number(process.env.SPILLWAY_PORT ?? 8417);
const folder = process.env.INIT_CWD ?? process.cwd();

const logDir = path.join(root, '.cache', 'logs');
const logFile = path.join(logDir, 'start.log');
fs.mkdirSync(logDir, { recursive: true });
const say = (line) => console.log(`[start] ${line}`);

say('building the extension…');
try {
  execFileSync(process.execPath, [path.join(root, 'esbuild.mjs')], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
} catch (err) {
  process.stderr.write(`${err.stdout ?? ''}${err.stderr ?? ''}`);
  process.exit(1);
}

const hasCode = !forceServer && spawnSync('code', ['--version'], { stdio: 'ignore' }).status === 0;
if (hasCode) {
  console.log('Opening VS Code with Spillway from this checkout (Extension Development Host)…');
  spawn('code', ['--new-window', `--extensionDevelopmentPath=${root}`, folder], { stdio: 'inherit', detached: true }).unref();
  process.exit(0);
}

const env = await ensureE2eEnvironment();
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const state = process.env.SPILLWAY_START_DIR ?? path.join(root, '.cache', 'start');
const extensionsDir = path.join(state, 'extensions');
const userDataDir = path.join(state, 'user-data');

// Install this checkout the way the .vsix would lay it out (fresh each start).
const target = path.join(extensionsDir, `${pkg.publisher}.${pkg.name}-${pkg.version}`);
fs.rmSync(target, { recursive: true, force: true });
fs.mkdirSync(path.join(target, 'dist'), { recursive: true });
for (const item of ['package.json', 'README.md', 'LICENSE', 'media']) {
  if (fs.existsSync(path.join(root, item))) fs.cpSync(path.join(root, item), path.join(target, item), { recursive: true });
}
for (const item of ['extension.js', 'extension.js.map', 'webview']) {
  if (fs.existsSync(path.join(root, 'dist', item))) fs.cpSync(path.join(root, 'dist', item), path.join(target, 'dist', item), { recursive: true });
}

// A window a user can read: no chat or secondary side bar taking the width
// (written every start, so an older .cache/start is brought up to date).
const settings = {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
};
const settingsFile = path.join(userDataDir, 'User', 'settings.json');
fs.mkdirSync(path.dirname(settingsFile), { recursive: true });
let userSettings = {};
try {
  userSettings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
} catch {
  // first start, or a file edited into something unreadable: start from ours
}
fs.writeFileSync(settingsFile, JSON.stringify({ ...userSettings, ...settings }, null, 2));
writeRevealHelper(path.join(extensionsDir, 'spillway.start-reveal-0.0.0'));

/**
 * A throwaway extension, only for `npm start`: once the window is up it opens
 * and focuses the Spills view, so the first thing on screen is Spillway.
 */
function writeRevealHelper(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({
    name: 'start-reveal', publisher: 'spillway', version: '0.0.0', engines: { vscode: '^1.90.0' },
    activationEvents: ['onStartupFinished'], main: './reveal.js',
  }));
  // Focusing the view opens it, which starts the first scan; while it runs the
  // view shows its "loading" welcome text, and when the tree replaces that
  // text the focus goes with it. So: focus, wait for the scan, focus the tree.
  fs.writeFileSync(path.join(dir, 'reveal.js'), [
    "const vscode = require('vscode');",
    "const focus = () => vscode.commands.executeCommand('spillway.spills.focus');",
    'exports.activate = async () => {',
    "  const api = await vscode.extensions.getExtension('spillway.spillway')?.activate();",
    '  await focus();',
    '  await api?.container?.service?.ready?.();',
    '  setTimeout(focus, 500);',
    '};',
  ].join('\n'));
}

const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`;
const logFd = fs.openSync(logFile, 'a');
fs.writeSync(logFd, `\n--- npm start, ${new Date().toISOString()}: code-server on 127.0.0.1:${port}\n`);
say(`starting code-server (its log: ${path.relative(process.cwd(), logFile) || logFile})…`);
const server = spawn(
  env.node24,
  [env.codeServer, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--extensions-dir', extensionsDir, '--user-data-dir', userDataDir, '--disable-telemetry', '--disable-update-check', folder],
  { stdio: ['ignore', 'pipe', logFd] },
);
let listening = false;
server.stdout.on('data', (d) => {
  fs.writeSync(logFd, d);
  if (!listening && /HTTP server listening/.test(String(d))) {
    listening = true;
    console.log(`\nSpillway is running in VS Code (code-server): ${url}\nOpen the Spillway icon in the activity bar. Ctrl+C stops it.\n`);
  }
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.kill('SIGTERM'));
server.on('exit', (code, signal) => {
  if (code) {
    const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
    process.stderr.write(`code-server exited with ${code}; the end of ${logFile}:\n${tail}\n`);
  }
  process.exit(code ?? (signal ? 0 : 1));
});
