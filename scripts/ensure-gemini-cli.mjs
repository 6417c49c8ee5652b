#!/usr/bin/env node
// Real Gemini CLI for the integration tests, pinned: installed into
// .cache/gemini-cli/ once (not a dev dependency: it is a whole agent with its
// own dependency tree), run by the tests with the project's Node.
// Usage: node scripts/ensure-gemini-cli.mjs
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installerEnv, repoRoot, runStep } from './install-step.mjs';

export const GEMINI_CLI_VERSION = '0.61.0';

export const geminiPrefix = path.join(repoRoot, '.cache', 'gemini-cli');

export async function ensureGeminiCli() {
  // The marker is written last, so a half-finished install is redone.
  const ready = path.join(geminiPrefix, `.ready-${GEMINI_CLI_VERSION}`);
  if (!existsSync(ready)) {
    await runStep('gemini-cli', `installing Gemini CLI ${GEMINI_CLI_VERSION} into .cache/gemini-cli`, 'npm', [
      'install', '--prefix', geminiPrefix, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `@google/gemini-cli@${GEMINI_CLI_VERSION}`,
    ], { env: installerEnv(), freshDir: geminiPrefix });
    writeFileSync(ready, '');
  }
  return { script: path.join(geminiPrefix, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js') };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(await ensureGeminiCli()));
