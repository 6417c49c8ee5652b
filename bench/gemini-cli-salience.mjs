// What Gemini CLI's model sees of failing commands, with and without
// Spillway's AfterTool hook: the real Gemini CLI 0.61.0 (node scripts/setup.mjs
// gemini-cli) against the tests' mock Gemini API on 127.0.0.1 runs failing
// builds of 20 KB - 5 MB (exit 1 or 2, failure line at a random place in the
// middle among decoys), once alone and once with `spillway hook install
// gemini-cli`. Counted in what the model was sent: the failure line, the exit
// code, a path to a file holding the complete output, and the chars it took;
// timed: the whole `gemini -p` run, process start to exit.
// Usage: npm run build && node bench/gemini-cli-salience.mjs  (BENCH_FAILING=N builds, default 12)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureGeminiCli } from '../scripts/ensure-gemini-cli.mjs';
import { fmt, importTs, rng } from './spill-common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rand = rng(56);
const { script } = await ensureGeminiCli();
const mockLib = await importTs('test/integration/adapters/helpers/mock-gemini.ts');
const { failingBuild, fullOutputOf } = await importTs('test/integration/adapters/helpers/failing-build.ts');
const M = Number(process.env.BENCH_FAILING ?? 12);
const sizes = [20_000, 300_000, 5_000_000];
const builds = Array.from({ length: M }, (_, i) => failingBuild(sizes[i % sizes.length], 1 + (i % 2), rand));

function score(texts, cwd) {
  const r = { line: 0, code: 0, file: 0, chars: 0, bySize: new Map(sizes.map((s) => [s, 0])) };
  builds.forEach((b, i) => {
    const t = texts[i] ?? '';
    r.chars += t.length / builds.length;
    if (t.includes(b.failureLine)) {
      r.line++;
      r.bySize.set(b.bytes, r.bySize.get(b.bytes) + 1);
    }
    if (t.includes(`Exit Code: ${b.exitCode}`)) r.code++;
    const full = fullOutputOf(b, cwd).trimEnd();
    const named = [...t.matchAll(/(\/[^\s\]]+\.txt)/g)].map((m) => m[1]);
    if (named.some((p) => fs.existsSync(p) && fs.readFileSync(p, 'utf8').includes(full))) r.file++;
  });
  return r;
}

async function run(withSpillway) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-gemini-'));
  const { home, workDir } = mockLib.geminiDirs(tmp);
  if (withSpillway) execFileSync(process.execPath, [path.join(root, 'dist', 'cli.js'), 'hook', 'install', 'gemini-cli', '--user'], { env: { ...process.env, HOME: home } });
  const mock = await mockLib.startMockGemini(mockLib.shellScript(builds.map((b) => b.command)));
  try {
    const started = process.hrtime.bigint();
    const res = await mockLib.runGemini({ script, prompt: 'build', cwd: workDir, env: mockLib.offlineGeminiEnv({ home, baseUrl: mock.url }) });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (res.code !== 0) throw new Error(`gemini exited ${res.code}: ${res.stderr.slice(-1000)}`);
    // Each result as the model was first sent it (Gemini masks bulky older results in later requests).
    return { ...score(builds.map((_, i) => mockLib.firstSeenResult(mock.requests, i)), workDir), seconds };
  } finally {
    await mock.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const pct = (n) => `${fmt((n / M) * 100)}%`;
console.log(`failing commands through the real Gemini CLI 0.61.0 (${M} builds of 20 KB - 5 MB, exit 1 or 2)`);
console.log('variant                        failure line  exit code  full-output file  chars seen (mean)  whole run  failure line kept by size (20 KB / 300 KB / 5 MB)');
// Interleaved, twice each: the machine is shared, timings drift.
for (const round of [1, 2]) {
  for (const [label, withSpillway] of [['Gemini CLI alone', false], ['Gemini CLI + Spillway', true]]) {
    const r = await run(withSpillway);
    console.log(`${`${label} (run ${round})`.padEnd(31)}${pct(r.line).padStart(12)}${pct(r.code).padStart(11)}${pct(r.file).padStart(18)}${String(Math.round(r.chars)).padStart(19)}${`${r.seconds.toFixed(1)} s`.padStart(11)}  ${sizes.map((s) => `${r.bySize.get(s)} of ${builds.filter((b) => b.bytes === s).length}`).join(' / ')}`);
  }
}

// The hook alone, per shell call, as Gemini CLI starts it (event on stdin), beside
// the floor (a Node process that reads the same stdin and exits): median wall and
// CPU (user + system, read from /proc for the child) of 9 interleaved runs.
const { spawnSync } = await import('node:child_process');
const hook = path.join(root, 'dist', 'gemini-cli-hook.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-gemini-hook-'));
fs.mkdirSync(path.join(tmp, 'p', 'chats'), { recursive: true });
const eventFor = (bytes, n) => {
  const b = failingBuild(bytes, 2, rand);
  const output = fullOutputOf(b, tmp).trimEnd();
  return JSON.stringify({ session_id: `s${n}`, transcript_path: path.join(tmp, 'p', 'chats', `session-x-s${n}.jsonl`), cwd: tmp, hook_event_name: 'AfterTool', tool_name: 'run_shell_command', tool_input: { command: b.command }, tool_response: { llmContent: `<untrusted_context>\nOutput: ${output}\nExit Code: 2\nProcess Group PGID: 5\n</untrusted_context>` } });
};
const timed = (args, input) => {
  // bash's `times` prints the children's user and system time after the child ends.
  const started = process.hrtime.bigint();
  const res = spawnSync('bash', ['-c', `"$@" >/dev/null; times`, 'bash', ...args], { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  const wall = Number(process.hrtime.bigint() - started) / 1e6;
  const [u, s] = res.stdout.trim().split('\n').pop().split(' ').map((t) => { const m = /(\d+)m([\d.]+)s/.exec(t); return m ? Number(m[1]) * 60_000 + Number(m[2]) * 1000 : 0; });
  return { wall, cpu: u + s };
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log('\nthe AfterTool hook per shell call (median of 9; wall / CPU ms)');
console.log('output               floor: node reads stdin       dist/gemini-cli-hook.js');
let n = 0;
for (const [label, bytes] of [['echo ok (3 bytes)', 0], ['20 KB', 20_000], ['300 KB', 300_000], ['5 MB', 5_000_000]]) {
  const input = bytes === 0 ? JSON.stringify({ session_id: 's0', transcript_path: path.join(tmp, 'p', 'chats', 'session-x-s0.jsonl'), cwd: tmp, hook_event_name: 'AfterTool', tool_name: 'run_shell_command', tool_input: { command: 'echo ok' }, tool_response: { llmContent: '<untrusted_context>\nOutput: ok\nProcess Group PGID: 5\n</untrusted_context>' } }) : eventFor(bytes, ++n);
  const floor = [];
  const ours = [];
  for (let i = 0; i < 9; i++) {
    floor.push(timed([process.execPath, '-e', 'process.stdin.resume()'], input));
    ours.push(timed([process.execPath, hook], input));
  }
  const cell = (xs) => `${Math.round(median(xs.map((x) => x.wall)))} / ${Math.round(median(xs.map((x) => x.cpu)))}`;
  console.log(`${label.padEnd(21)}${cell(floor).padStart(22)}${cell(ours).padStart(30)}`);
}
fs.rmSync(tmp, { recursive: true, force: true });
