// Does the failure line survive? Generated failing build logs (10 KB - 400 KB)
// with one root-cause failure line at a random position in the middle
// (10%-90%), decoy lines that mention failure words (see DECOYS) and a tail
// that does not name the failure. Three
// digests of the same size: head-only (what Claude Code's 2 KB preview does),
// head+tail without salience, and Spillway's digest.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePi } from '../scripts/ensure-pi.mjs';
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
  // Failure lines that carry no failure word.
  (i) => `make[2]: *** No rule to make target 'gen/schema_${i}.h', needed by 'all'.  Stop.`,
  (i) => `./internal/store/orders.go:${i % 900}:14: undefined: RefundPolicy${i}`,
  (i) => `CONFLICT (content): Merge conflict in src/billing/invoice_${i}.ts`,
  (i) => `cp: cannot create regular file 'dist/bundle_${i}.js': No space left on device`,
  (i) => `ssh: connect to host build-${i % 250} port 22: Connection refused`,
  (i) => `./scripts/release.sh: line ${i % 90}: RELEASE_TAG_${i}: unbound variable`,
  (i) => `curl: (18) transfer closed with ${i * 1024} bytes remaining to read`,
  (i) => `The command '/bin/sh -c npm ci --prefix pkg-${i}' returned a non-zero code: 1`,
  // Glued to the end of a progress meter that ran for minutes (each update after a '\r', 6 KB in all): the error
  // is what must be seen.
  (i) => {
    const error = `curl: (56) Recv failure: Connection reset by peer (${i})`;
    const meter = Array.from({ length: 80 }, (_, s) => `\r  ${s % 100} 50.0M    ${s % 100} ${s * 16}k    0     0  16118      0  0:54:12  0:0${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}  0:53:03 16361`);
    return { line: meter.join('') + error, seen: error };
  },
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
  (i) => `npm WARN optional could not install fsevents@2.3.${i % 9} (platform linux)`,
  (i) => `mutation score: ${i % 97} killed, 3 survived`,
  (i) => `Sending SIGKILL to worker ${i % 16}`,
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
  const made = FAILURES[Math.floor(rand() * FAILURES.length)](at);
  const { line, seen } = typeof made === 'string' ? { line: made, seen: made } : made;
  lines[at] = line;
  lines.push(`build finished in ${Math.floor(rand() * 90)}s`, 'exit status 1');
  return { text: lines.join('\n') + '\n', failure: seen };
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
// Messages API on 127.0.0.1) and real pi 1.6 run failing builds of 20 KB - 5 MB (exit 1 or
// 2, failure line at a random place in the middle, decoys `0 failed` and
// `retrying (attempt 2)`) once without Spillway and once with it (Claude Code:
// `spillway hook install claude-code`, bypassPermissions; pi: the extension
// loaded from package.json "pi.extensions"). Counted
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
  /** Per build: is the failure line, the exit code, a file with the complete output in what the model saw? */
  const score = (texts, cwd) => {
    const r = { line: 0, code: 0, file: 0, chars: 0 };
    builds.forEach((b, i) => {
      const t = texts[i] ?? '';
      r.chars += t.length / builds.length;
      if (t.includes(b.failureLine)) r.line++;
      if (t.includes(`Exit code ${b.exitCode}`) || t.includes(`exited with code ${b.exitCode}`)) r.code++;
      const full = fullOutputOf(b, cwd);
      const named = [...t.matchAll(/(\/[^\s\]]+\.(?:txt|log))/g)].map((m) => m[1]);
      // pi's blob of a result under its own 50 KB cut is the tool's text: the output, then pi's status line.
      if (named.some((p) => fs.existsSync(p) && fs.readFileSync(p, 'utf8').includes(full.trimEnd()))) r.file++;
    });
    return r;
  };
  const runClaudeCode = async (withSpillway) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-cc-'));
    const { configDir, workDir } = mockLib.claudeDirs(tmp);
    if (withSpillway) execFileSync(process.execPath, [path.join(root, 'dist', 'cli.js'), 'hook', 'install', 'claude-code', '--user'], { env: { ...process.env, CLAUDE_CONFIG_DIR: configDir } });
    const mock = await mockLib.startMockAnthropic(mockLib.bashScript(builds.map((b) => b.command)));
    try {
      await mockLib.runClaude({ bin: claudeBin, prompt: 'build', cwd: workDir, env: mockLib.offlineClaudeEnv({ home: tmp, configDir, baseUrl: mock.url }) });
      return score(mockLib.toolResults(mock.requests[mock.requests.length - 1]).map((r) => r.text), workDir);
    } finally {
      await mock.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  };
  // Real pi 1.6 (its SDK, faux provider, the tests' driver on Node 22 from .cache/pi), bash tool, default settings.
  const runPi = async (withSpillway) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-pi-'));
    try {
      const { node: node22 } = await ensurePi();
      const res = spawnSync(node22, [path.join(root, 'test', 'integration', 'adapters', 'pi-driver.mjs'), 'commands', tmp, root], {
        encoding: 'utf8',
        maxBuffer: 256 << 20,
        env: { ...process.env, TMPDIR: tmp, PI_DRIVER_COMMANDS: JSON.stringify(builds.map((b) => b.command)), PI_DRIVER_WITHOUT_SPILLWAY: withSpillway ? '0' : '1' },
      });
      const report = JSON.parse(res.stdout.trim().split('\n').pop());
      if (report.errors.length > 0) throw new Error(report.errors.join('\n'));
      const last = report.requests[report.requests.length - 1];
      return score(builds.map((_, i) => last.find((r) => r.toolCallId === `call_cmd_${i}`)?.text ?? ''), path.join(tmp, 'work'));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  };
  const pct = (n) => `${fmt((n / M) * 100)}%`;
  console.log(`\nfailing commands through the real agents (${M} builds of 20 KB - 5 MB, exit 1 or 2)`);
  console.log('agent                       failure line  exit code  full-output file  chars seen (mean)');
  const rows = [
    ['Claude Code 2.1.332 alone', () => runClaudeCode(false)],
    ['Claude Code + Spillway', () => runClaudeCode(true)],
    ['pi 1.6 alone', () => runPi(false)],
    ['pi 1.6 + Spillway', () => runPi(true)],
  ];
  for (const [label, run] of rows) {
    const r = await run();
    console.log(`${label.padEnd(28)}${pct(r.line).padStart(12)}${pct(r.code).padStart(11)}${pct(r.file).padStart(18)}${String(Math.round(r.chars)).padStart(19)}`);
  }
}
