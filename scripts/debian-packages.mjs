#!/usr/bin/env node
// Installs the Debian packages the tests need, once: apt runs only for the
// ones dpkg does not list as installed (root, or sudo otherwise).
// Usage: node scripts/debian-packages.mjs ripgrep [more...]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

function installed(name) {
  try {
    const out = execFileSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.includes('install ok installed');
  } catch {
    return false;
  }
}

/** apt-get installs whichever of `names` are missing; returns them. */
export function ensureDebianPackages(names, log = (msg) => process.stderr.write(`${msg}\n`)) {
  const missing = names.filter((name) => !installed(name));
  if (missing.length === 0) return missing;
  log(`apt-get install ${missing.join(' ')}`);
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const run = (args) => execFileSync(sudo[0] ?? args[0], sudo.length ? args : args.slice(1), {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  run(['apt-get', 'update', '-qq']);
  run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...missing]);
  return missing;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) ensureDebianPackages(process.argv.slice(2));
