// What the model sees of a failing build under the real Codex CLI 0.169.0
// (offline, mock Responses API), without and with Spillway's hook: 12 failing
// builds of 20 KB - 5 MB (each kind of failure line, exit 1 or 2, the failure
// line at a random place in the middle 80%), in one session each way. Prints,
// per way: builds whose failure line reached the model, whose exit code did,
// whose answer names a file holding the whole output, and the characters the
// model got per build. Then the time a user waits, `codex exec` start to exit,
// for a session that runs `echo ok` twice, without and with the hook
// (interleaved runs; the machine is shared, so medians).
// Usage: node bench/codex-salience.mjs   (after `npm run build`)
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCodex } from '../scripts/ensure-codex.mjs';
import { importTs, median } from './spill-common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { failingBuild } = await importTs('test/integration/adapters/helpers/failing-build.ts');
const { startMockResponses } = await importTs('test/integration/adapters/helpers/mock-responses.ts');
const { runCodex, execScript, outputFor } = await importTs('test/integration/adapters/helpers/codex.ts');
const { bin } = await ensureCodex();

const SIZES = [20_000, 20_000, 25_000, 300_000, 300_000, 300_000, 300_000, 1_000_000, 2_000_000, 5_000_000, 5_000_000, 5_000_000];
const builds = SIZES.map((bytes, i) => failingBuild(bytes, 1 + (i % 2), Math.random, i % 6));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-codex-bench-'));

function home(name, withHook) {
  const codexHome = path.join(tmp, name, 'codex-home');
  const work = path.join(tmp, name, 'work');
  fs.mkdirSync(codexHome, { recursive: true });
  fs.mkdirSync(work, { recursive: true });
  if (withHook) {
    const res = spawnSync(process.execPath, [path.join(root, 'dist', 'cli.js'), 'hook', 'install', 'codex', '--trust'], { env: { ...process.env, CODEX_HOME: codexHome }, encoding: 'utf8' });
    if (res.status !== 0) throw new Error(res.stderr);
  }
  return { codexHome, work };
}

async function session(name, withHook, commands) {
  const { codexHome, work } = home(name, withHook);
  const mock = await startMockResponses(execScript(commands));
  const started = process.hrtime.bigint();
  const run = await runCodex({ codexHome, cwd: work, baseUrl: mock.url, bin });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  await mock.close();
  if (run.code !== 0) throw new Error(`codex exited ${run.code}: ${run.stderr.slice(-500)}`);
  return { last: mock.requests[mock.requests.length - 1], ms };
}

for (const [label, withHook] of [['Codex alone', false], ['Codex + Spillway', true]]) {
  const { last } = await session(label.replace(/\W+/g, '-'), withHook, builds.map((b) => b.command));
  let failure = 0, exit = 0, file = 0, chars = 0;
  for (const b of builds) {
    const seen = outputFor(last, b.command);
    if (seen.includes(b.failureLine)) failure++;
    if (seen.includes(`Process exited with code ${b.exitCode}`)) exit++;
    const named = /complete output \(stdout and stderr\) is in (\S+)\]/.exec(seen)?.[1];
    if (named && fs.existsSync(named) && fs.statSync(named).size >= b.bytes * 0.9) file++;
    chars += seen.length;
  }
  console.log(`${label}: failure line ${failure}/${builds.length}, exit code ${exit}/${builds.length}, whole output on disk ${file}/${builds.length}, ${Math.round(chars / builds.length).toLocaleString('en-US')} chars per build on average`);
}

const RUNS = 5;
const times = { alone: [], hook: [] };
for (let i = 0; i < RUNS; i++) {
  for (const [key, withHook] of [['alone', false], ['hook', true]]) {
    times[key].push((await session(`echo-${key}-${i}`, withHook, ['echo ok', 'echo ok'])).ms);
  }
}
console.log(`codex exec, a session of two \`echo ok\` calls, start to exit (${RUNS} interleaved runs): alone median ${Math.round(median(times.alone))} ms, with the hook ${Math.round(median(times.hook))} ms`);
fs.rmSync(tmp, { recursive: true, force: true });
