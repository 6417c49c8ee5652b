// Does the failure line survive? Generated failing build logs (10 KB - 400 KB)
// with one root-cause failure line at a random position in the middle
// (10%-90%), decoy lines that mention failure words (see DECOYS) and a tail
// that does not name the failure. Three
// digests of the same size: head-only (what Claude Code's 2 KB preview does),
// head+tail without salience, and Spillway's digest.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { engine, fmt, importTs, logLine, rng } from './spill-common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const { digestText, utf8Bytes } = engine;
const rand = rng(42);
const N = 300;
const LOCATOR = '/home/dev/.local/state/spillway/spills/session-0123456789ab/0123456789ab-Bash-toolu_01ABCDEFGHJKLMNPQRSTUVWX.txt';
const FAILURES = [
  (i) => `src/api/handler.test.ts:${i} AssertionError: expected 500 to equal 200 (case ${i})`,
  (i) => `error TS2322: Type 'string' is not assignable to type 'number'. src/model/user${i}.ts(${i % 300},7)`,
  (i) => `thread 'worker-${i}' panicked at 'index out of bounds: the len is 3 but the index is ${i}'`,
  (i) => `Traceback (most recent call last): File "build_${i}.py", line ${i % 500}, in <module>`,
  (i) => `npm ERR! code ELIFECYCLE (errno ${i})`,
  (i) => `FAILED tests/test_orders.py::test_refund_${i} - KeyError: 'amount'`,
];
// Lines that mention failure words without being the failure: paths and
// zero counts (which the matcher rejects) and repeated retry/deprecation noise
// (which it matches, and must not let crowd out the root cause).
const DECOYS = [
  (i) => `compiling src/errors/index.ts (${i} ms)`,
  (i) => `Tests: 0 failed, ${i} passed`,
  (i) => `bundling error-boundary.tsx ok (${i} kB)`,
  (i) => `lint: 0 errors, ${i % 9} warnings`,
  (i) => `retrying request ${i}: error ECONNRESET`,
  (i) => `warning: fs.exists is deprecated and will fail in v${i % 5 + 5}`,
];

function failingLog(bytes, decoyRate) {
  const lines = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const l = rand() < decoyRate ? DECOYS[Math.floor(rand() * DECOYS.length)](i) : logLine(rand, i);
    lines.push(l);
    size += l.length + 1;
  }
  const at = Math.floor(lines.length * (0.1 + 0.8 * rand()));
  const failure = FAILURES[Math.floor(rand() * FAILURES.length)](at);
  lines[at] = failure;
  lines.push(`build finished in ${Math.floor(rand() * 90)}s`, 'exit status 1');
  return { text: lines.join('\n') + '\n', failure };
}

const headOnly = (text, budget) => {
  const buf = Buffer.from(text);
  return buf.subarray(0, budget).toString('utf8');
};

for (const decoyRate of [0, 0.01, 0.05]) {
  const logs = Array.from({ length: N }, () => failingLog(10_000 + Math.floor(rand() * 390_000), decoyRate));
  console.log(`\ndecoy lines: ${decoyRate * 100}% of lines (${N} logs)`);
  console.log('budget  head-only  head+tail (no salience)  spillway digest  digest bytes (max)');
  for (const budget of [1024, 1536, 2048, 3072, 4096]) {
    let head = 0;
    let ht = 0;
    let sw = 0;
    let maxBytes = 0;
    for (const { text, failure } of logs) {
      if (headOnly(text, budget).includes(failure)) head++;
      const o = { budgetBytes: budget, toolName: 'Bash', locator: LOCATOR };
      if (digestText(text, { ...o, salience: false }).includes(failure)) ht++;
      const d = digestText(text, o);
      maxBytes = Math.max(maxBytes, utf8Bytes(d));
      if (d.includes(failure)) sw++;
    }
    const pct = (n) => (fmt((n / N) * 100) + '%').padStart(7);
    console.log(`${String(budget).padStart(6)}  ${pct(head).padStart(9)}  ${pct(ht).padStart(23)}  ${pct(sw).padStart(15)}  ${String(maxBytes).padStart(10)}`);
  }
}

// The same question end to end, for failing commands through the real
// adapters: the real Claude Code 2.1.332 binary (against the tests' mock
// Messages API on 127.0.0.1) runs failing builds of 20 KB - 5 MB (exit 1 or
// 2, failure line at a random place in the middle, decoys `0 failed` and
// `retrying (attempt 2)`) once without Spillway and once with its hooks
// installed (`spillway hook install claude-code`, bypassPermissions). Counted
// in what the model was sent: the failure line, the exit code, and a path to a
// file holding the complete output.
const claudeBin = path.join(root, 'node_modules', '@anthropic-ai', 'claude-agent-sdk-linux-x64', 'claude');
if (!fs.existsSync(claudeBin)) {
  console.log(`\n(skipped: no Claude Code binary at ${claudeBin})`);
} else {
  const mockLib = await importTs('test/integration/adapters/helpers/mock-anthropic.ts');
  const { failingBuild, fullOutputOf } = await importTs('test/integration/adapters/helpers/failing-build.ts');
  const M = Number(process.env.BENCH_FAILING ?? 12);
  const sizes = [20_000, 300_000, 5_000_000];
  const builds = Array.from({ length: M }, (_, i) => failingBuild(sizes[i % sizes.length], 1 + (i % 2), rand));
  const runAgent = async (withSpillway) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-cc-'));
    const { configDir, workDir } = mockLib.claudeDirs(tmp);
    if (withSpillway) execFileSync(process.execPath, [path.join(root, 'dist', 'cli.js'), 'hook', 'install', 'claude-code', '--user'], { env: { ...process.env, CLAUDE_CONFIG_DIR: configDir } });
    const mock = await mockLib.startMockAnthropic(mockLib.bashScript(builds.map((b) => b.command)));
    try {
      await mockLib.runClaude({ bin: claudeBin, prompt: 'build', cwd: workDir, env: mockLib.offlineClaudeEnv({ home: tmp, configDir, baseUrl: mock.url }) });
      const last = mock.requests[mock.requests.length - 1];
      const texts = mockLib.toolResults(last).map((r) => r.text);
      let line = 0;
      let code = 0;
      let file = 0;
      let chars = 0;
      builds.forEach((b, i) => {
        const t = texts[i] ?? '';
        chars += t.length;
        if (t.includes(b.failureLine)) line++;
        if (t.includes(`Exit code ${b.exitCode}`)) code++;
        const named = [...t.matchAll(/(\/[^\s\]]+\.txt)/g)].map((m) => m[1]);
        const full = fullOutputOf(b, workDir);
        if (named.some((p) => fs.existsSync(p) && fs.readFileSync(p, 'utf8') === full)) file++;
      });
      return { line, code, file, chars: Math.round(chars / builds.length) };
    } finally {
      await mock.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  };
  const pct = (n) => `${fmt((n / M) * 100)}%`;
  console.log(`\nfailing commands through the real Claude Code 2.1.332 (${M} builds of 20 KB - 5 MB, exit 1 or 2)`);
  console.log('adapter                     failure line  exit code  full-output file  chars seen (mean)');
  for (const [label, withSpillway] of [['Claude Code alone', false], ['Claude Code + Spillway', true]]) {
    const r = await runAgent(withSpillway);
    console.log(`${label.padEnd(28)}${pct(r.line).padStart(12)}${pct(r.code).padStart(11)}${pct(r.file).padStart(18)}${String(r.chars).padStart(19)}`);
  }
}
