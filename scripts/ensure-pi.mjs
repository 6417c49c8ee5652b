#!/usr/bin/env node
// Real pi for the integration tests. pi needs Node >= 22.19, so it is not a
// dev dependency (npm ci on Node 20 would warn about it and everything it
// pulls in): it is installed with Node 22 into .cache/pi/ once, and the tests
// run it there with that Node (the machine's npm, run by Node 22 through PATH).
// Usage: node scripts/ensure-pi.mjs
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode } from './ensure-node.mjs';
import { installerEnv, repoRoot, runStep } from './install-step.mjs';

export const PI_VERSION = '1.6.0';
const PI_PACKAGES = [`@earendil-works/pi-coding-agent@${PI_VERSION}`, `@earendil-works/pi-ai@${PI_VERSION}`];

/** Where pi's packages live (a plain node_modules tree; its typings serve the type-check too). */
export const piPrefix = path.join(repoRoot, '.cache', 'pi');

export async function ensurePi() {
  const node = await ensureNode(22);
  // The marker is written last, so a half-finished install is redone.
  const ready = path.join(piPrefix, `.ready-${PI_VERSION}`);
  if (!existsSync(ready)) {
    await runStep('pi', `installing pi ${PI_VERSION} with Node 22 into .cache/pi`, 'npm', [
      'install', '--prefix', piPrefix, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', ...PI_PACKAGES,
    ], { env: installerEnv(node), freshDir: piPrefix });
    writeFileSync(ready, '');
  }
  return { node, modules: path.join(piPrefix, 'node_modules') };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(await ensurePi()));
