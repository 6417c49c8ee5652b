#!/usr/bin/env node
// Real opencode for the integration tests, installed into .cache/opencode once.
// The npm package's own bin is a placeholder until its postinstall runs, so
// scripts are not run and the tests start the platform package's binary.
// opencode installs its plugin SDK into its config folder on every start
// unless node_modules and a matching package-lock.json are there; a ready copy
// (plugin-home/) is made here once so the tests can run offline.
// Usage: node scripts/ensure-opencode.mjs
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installerEnv, repoRoot, runStep } from './install-step.mjs';

export const OPENCODE_VERSION = '1.18.33';

export const opencodePrefix = path.join(repoRoot, '.cache', 'opencode');

export async function ensureOpencode() {
  const ready = path.join(opencodePrefix, `.ready-${OPENCODE_VERSION}`);
  const pluginHome = path.join(opencodePrefix, 'plugin-home');
  if (!existsSync(ready)) {
    await runStep('opencode', `installing opencode ${OPENCODE_VERSION} into .cache/opencode`, 'npm', [
      'install', '--prefix', opencodePrefix, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts',
      `opencode-ai@${OPENCODE_VERSION}`, `opencode-linux-x64@${OPENCODE_VERSION}`,
    ], { env: installerEnv(), freshDir: opencodePrefix });
    mkdirSync(pluginHome, { recursive: true });
    await runStep('opencode-plugin', `installing @opencode-ai/plugin ${OPENCODE_VERSION} for opencode's config folder`, 'npm', [
      'install', '--prefix', pluginHome, '--no-audit', '--no-fund', '--ignore-scripts', `@opencode-ai/plugin@${OPENCODE_VERSION}`,
    ], { env: installerEnv(), freshDir: pluginHome });
    writeFileSync(ready, '');
  }
  return {
    binary: path.join(opencodePrefix, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode'),
    pluginHome,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(await ensureOpencode()));
