#!/usr/bin/env node
// Installs the Debian packages the tests need, once: apt runs only for the
// ones dpkg does not list as installed (root, or sudo otherwise), with
// --no-upgrade so a package already there is never upgraded, and quietly (the
// output goes to .cache/logs/apt.log). It names what it installs and any
// installed package apt must upgrade as a dependency of those.
// Usage: node scripts/debian-packages.mjs ripgrep [more...]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { log, runStep } from './install-step.mjs';

function installed(name) {
  try {
    const out = execFileSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.includes('install ok installed');
  } catch {
    return false;
  }
}

/** Installed packages that `apt-get install` of `names` would upgrade (apt's dry run: "Inst pkg [old] (new ...)"). */
function dependencyUpgrades(apt, names) {
  try {
    const plan = execFileSync(apt[0], [...apt.slice(1), 'install', '-s', '--no-install-recommends', '--no-upgrade', ...names], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return [...plan.matchAll(/^Inst (\S+) \[/gm)].map((m) => m[1]);
  } catch {
    return [];
  }
}

/** apt-get installs whichever of `names` are missing; returns them. */
export async function ensureDebianPackages(names) {
  const missing = names.filter((name) => !installed(name));
  if (missing.length === 0) return missing;
  const apt = process.getuid?.() === 0 ? ['apt-get'] : ['sudo', 'apt-get'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await runStep('apt-update', 'apt-get update', apt[0], [...apt.slice(1), 'update', '-qq'], { env });
  const upgrades = dependencyUpgrades(apt, missing);
  if (upgrades.length > 0) log(`apt must also upgrade, as dependencies: ${upgrades.join(' ')}`);
  await runStep('apt', `apt-get install ${missing.join(' ')}`, apt[0], [...apt.slice(1), 'install', '-y', '-qq', '--no-install-recommends', '--no-upgrade', ...missing], { env });
  return missing;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await ensureDebianPackages(process.argv.slice(2));
