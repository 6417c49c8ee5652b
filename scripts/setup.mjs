#!/usr/bin/env node
// What the test scripts need beyond `npm ci`, installed on first use so that
// the README's commands work on a machine with only Node 20 and npm:
//   ripgrep  Debian's ripgrep (grep parity tests)
//   sandbox  Debian's bubblewrap and socat: Claude Code's own sandbox, which the Bash capture's tests turn on
//   pi       real pi on Node 22 in .cache/pi (pi's typings for the type-check, its runtime for the tests)
//   codex    the real Codex CLI in .cache/codex (its end-to-end tests)
//   gemini-cli  real Gemini CLI (pinned) in .cache/gemini-cli, for the adapter's end-to-end tests
//   opencode real opencode and its plugin SDK in .cache/opencode (the opencode adapter's tests)
//   s3       Debian's ceph-mon, ceph-osd and radosgw: a throwaway Ceph RGW, the real S3 server the object-store tests run against
//   e2e      Chromium, Node 24 and code-server in .cache/ (end to end, npm start)
// Progress goes to stderr; nothing to stdout. Usage: node scripts/setup.mjs pi ripgrep
import { ensureDebianPackages } from './debian-packages.mjs';
import { ensureE2eEnvironment } from './e2e-setup.mjs';
import { ensureCodex } from './ensure-codex.mjs';
import { ensureGeminiCli } from './ensure-gemini-cli.mjs';
import { ensureOpencode } from './ensure-opencode.mjs';
import { ensurePi } from './ensure-pi.mjs';

const steps = { ripgrep: () => ensureDebianPackages(['ripgrep']), sandbox: () => ensureDebianPackages(['bubblewrap', 'socat']), pi: ensurePi, codex: ensureCodex, 'gemini-cli': ensureGeminiCli, opencode: ensureOpencode, s3: () => ensureDebianPackages(['ceph-mon', 'ceph-osd', 'radosgw']), e2e: ensureE2eEnvironment };
const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !(name in steps));
if (asked.length === 0 || unknown.length > 0) {
  console.error(`usage: node scripts/setup.mjs ${Object.keys(steps).join('|')} [...]`);
  process.exit(2);
}
for (const name of asked) await steps[name]();
