#!/usr/bin/env node
// Real Codex CLI for the integration tests. Not a dev dependency: its npm
// package ships the native binary in a platform package (pulled in as an
// optional dependency), installed once into .cache/codex/ and run from there;
// nothing is downloaded when it runs.
// Usage: node scripts/ensure-codex.mjs
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installerEnv, repoRoot, runStep } from './install-step.mjs';

export const CODEX_VERSION = '0.169.0';

/** Where Codex's packages live. */
export const codexPrefix = path.join(repoRoot, '.cache', 'codex');

export async function ensureCodex() {
  // The marker is written last, so a half-finished install is redone.
  const ready = path.join(codexPrefix, `.ready-${CODEX_VERSION}`);
  if (!existsSync(ready)) {
    await runStep('codex', `installing Codex CLI ${CODEX_VERSION} into .cache/codex`, 'npm', [
      'install', '--prefix', codexPrefix, '--no-save', '--no-audit', '--no-fund', '--no-package-lock',
      `@openai/codex@${CODEX_VERSION}`,
    ], { env: installerEnv(), freshDir: codexPrefix });
    writeFileSync(ready, '');
  }
  return { bin: path.join(codexPrefix, 'node_modules', '.bin', 'codex') };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(await ensureCodex()));
