#!/usr/bin/env node
// Installs the Debian packages the tests need, once: apt runs only for the
// ones dpkg does not list as installed (root, or sudo otherwise), quietly (the
// output goes to .cache/logs/apt.log), and never upgrades a package already
// installed. apt's --no-upgrade covers only the packages named: a new package
// that needs a newer version of an installed library (libcom-err2, and with it
// e2fsprogs) still upgrades it. So apt's plan is checked first; the installed
// packages it would upgrade are held at their installed versions
// (`name=version`); when no plan exists without upgrading them, apt upgrades
// them and the step names them (SPILLWAY_APT_ALLOW_UPGRADE=1 skips the hold).
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

/** The installed version of a package, or undefined. */
function installedVersion(name) {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Version}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * apt's dry run of installing `args`: the installed packages it would upgrade ("Inst pkg [old] (new ...)"), or
 * `undefined` when apt finds no plan at all.
 */
function plannedUpgrades(apt, args) {
  try {
    const plan = execFileSync(apt[0], [...apt.slice(1), 'install', '-s', '--no-install-recommends', '--no-upgrade', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return [...plan.matchAll(/^Inst (\S+) \[/gm)].map((m) => m[1]);
  } catch {
    return undefined;
  }
}

/**
 * What to hand apt-get install: the missing packages, plus `name=version` for each installed package apt would
 * otherwise upgrade as a dependency (held where it is), or just the missing ones when only an upgrade would do.
 */
export function installArgs(apt, missing, allowUpgrade) {
  const upgrades = plannedUpgrades(apt, missing) ?? [];
  if (upgrades.length === 0 || allowUpgrade) {
    if (upgrades.length) log(`apt upgrades, as dependencies (SPILLWAY_APT_ALLOW_UPGRADE is set): ${upgrades.join(' ')}`);
    return missing;
  }
  const held = upgrades.map((name) => [name, installedVersion(name)]).filter(([, v]) => v).map(([name, v]) => `${name}=${v}`);
  const args = [...missing, ...held];
  const still = plannedUpgrades(apt, args);
  if (still !== undefined && still.length === 0) {
    log(`holding at their installed versions: ${held.join(' ')}`);
    return args;
  }
  // A new machine's packages can be older than what the new ones were built against (libkrb5-dev needs
  // the libkrb5-3 of its own release): then the upgrade is the only way, and it is said, not hidden.
  log(`apt upgrades, as dependencies (no plan holds them): ${upgrades.join(' ')}`);
  return missing;
}

/** apt-get installs whichever of `names` are missing; returns them. */
export async function ensureDebianPackages(names) {
  const missing = names.filter((name) => !installed(name));
  if (missing.length === 0) return missing;
  const apt = process.getuid?.() === 0 ? ['apt-get'] : ['sudo', 'apt-get'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await runStep('apt-update', 'apt-get update', apt[0], [...apt.slice(1), 'update', '-qq'], { env });
  const args = installArgs(apt, missing, process.env.SPILLWAY_APT_ALLOW_UPGRADE === '1');
  await runStep('apt', `apt-get install ${missing.join(' ')}`, apt[0], [...apt.slice(1), 'install', '-y', '-qq', '--no-install-recommends', '--no-upgrade', ...args], { env, limitSeconds: 900 });
  return missing;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await ensureDebianPackages(process.argv.slice(2));
