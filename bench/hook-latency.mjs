// How long Claude Code waits for `spillway hook claude-code` per tool call
// (the PostToolUse hook; the Bash capture's cost is in bash-capture-latency.mjs),
// against the floor any Node command hook pays (start Node, read stdin, exit),
// on the same inputs in the same run, runs interleaved so machine noise hits
// every variant alike. Inputs: a small result (nothing to do), a 20 KB Bash
// result (spilled beside tool-results/), and a 350 KB result Claude Code
// already persisted (digested from its file). Also: digesting that persisted
// file by streaming (what the hook does) vs reading it whole.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli.js');
const lean = path.join(root, 'dist', 'hook.js');
if (!fs.existsSync(cli)) throw new Error('build first: npm run build');
const RUNS = Number(process.env.BENCH_RUNS ?? 25);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-hook-'));
const sid = 'bench-session';
const project = path.join(tmp, 'projects', '-bench');
const toolResults = path.join(project, sid, 'tool-results');
fs.mkdirSync(toolResults, { recursive: true });
const persisted = path.join(toolResults, 'bbenchfile.txt');
const big = Array.from({ length: 60_000 }, (_, i) => String(i + 1)).join('\n') + '\n';
fs.writeFileSync(persisted, big);

let n = 0;
const event = (response) =>
  JSON.stringify({
    session_id: sid, transcript_path: path.join(project, `${sid}.jsonl`), cwd: tmp, hook_event_name: 'PostToolUse',
    tool_name: 'Bash', tool_input: { command: 'bench' }, tool_response: response, tool_use_id: `toolu_bench_${n++}`,
  });
const inputs = {
  small: () => event({ stdout: 'ok\n', stderr: '', interrupted: false }),
  band20k: () => event({ stdout: Array.from({ length: 1500 }, (_, i) => `line ${i} ${n}`).join('\n'), stderr: '', interrupted: false }),
  persisted350k: () => event({ stdout: big.slice(0, 30_000), stderr: '', interrupted: false, persistedOutputPath: persisted, persistedOutputSize: big.length }),
};
const floor = ['-e', 'process.stdin.resume(); process.stdin.on("end", () => {})'];

// CPU time (user + sys, from GNU time) is reported beside wall time: on a
// loaded machine it is the steadier measure of the work the hook itself does.
const gnuTime = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const cpu = {};
function time(args, input, name) {
  const t0 = performance.now();
  const r = gnuTime
    ? spawnSync(gnuTime, ['-f', 'SPILLWAY-CPU %U %S', process.execPath, ...args], { input, encoding: 'utf8' })
    : spawnSync(process.execPath, args, { input, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  const m = /SPILLWAY-CPU ([\d.]+) ([\d.]+)/.exec(r.stderr);
  if (m && name) (cpu[name] ??= []).push((Number(m[1]) + Number(m[2])) * 1000);
  return ms;
}
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: q(0.5), p90: q(0.9) };
};

// Each input through the full CLI (`spillway hook claude-code`) and the lean
// dist/hook.js that `hook install` wires in.
const results = { floor: [] };
for (let i = 0; i < RUNS; i++) {
  for (const [name, make] of Object.entries(inputs)) {
    const input = make();
    results.floor.push(time(floor, input, 'floor'));
    (results[`cli ${name}`] ??= []).push(time([cli, 'hook', 'claude-code'], input, `cli ${name}`));
    (results[`hook.js ${name}`] ??= []).push(time([lean, 'claude-code'], make(), `hook.js ${name}`));
  }
}
const base = stats(results.floor).median;
const cpuBase = cpu.floor ? stats(cpu.floor).median : 0;
console.log(`hook latency, ${RUNS} runs each (ms; node ${process.version}, ${os.cpus().length} cpus, load ${os.loadavg()[0].toFixed(1)})`);
console.log(`${'variant'.padEnd(34)}${'wall med'.padStart(9)}${'p90'.padStart(8)}${'over floor'.padStart(12)}${'cpu med'.padStart(9)}${'over floor'.padStart(12)}`);
for (const [name, xs] of Object.entries(results)) {
  const { median, p90 } = stats(xs);
  const c = cpu[name] ? stats(cpu[name]).median : NaN;
  const label = name === 'floor' ? 'floor: node reads stdin, exits' : name;
  const over = (v, b) => (name === 'floor' ? '' : `${v - b >= 0 ? '+' : ''}${(v - b).toFixed(0)}`);
  console.log(`${label.padEnd(34)}${median.toFixed(0).padStart(9)}${p90.toFixed(0).padStart(8)}${over(median, base).padStart(12)}${c.toFixed(0).padStart(9)}${over(c, cpuBase).padStart(12)}`);
}

// The hook's own work without process start-up, in this process (steadier on
// a loaded machine): handleClaudeCodeHookInput on the same inputs.
const lib = await import(path.join(root, 'dist', 'index.js'));
const inProcess = {};
for (let i = 0; i < RUNS; i++) {
  for (const [name, make] of Object.entries(inputs)) {
    const input = make();
    const t0 = performance.now();
    await lib.handleClaudeCodeHookInput(input, { env: {} });
    (inProcess[name] ??= []).push(performance.now() - t0);
  }
}
console.log(`\nin-process handling (no Node start-up), median / p90 ms:`);
for (const [name, xs] of Object.entries(inProcess)) {
  const { median, p90 } = stats(xs);
  console.log(`  ${name.padEnd(16)}${median.toFixed(2).padStart(9)}${p90.toFixed(2).padStart(9)}`);
}

// Streaming digest of the persisted file vs the obvious alternative (read it whole, cut head + tail).
const { digestFile, digestText } = lib;
const hugePath = path.join(tmp, 'huge.txt');
const line = 'x'.repeat(79) + '\n';
fs.writeFileSync(hugePath, line.repeat(64 * 1024 * 1024 / line.length)); // 64 MiB, Claude Code's cap for b<id>.txt
const opts = { budgetBytes: 3072, toolName: 'Bash', locator: hugePath };
const mem = () => process.memoryUsage().rss / 2 ** 20;
let t0 = performance.now();
let rss0 = mem();
await digestFile(hugePath, opts);
const streamMs = performance.now() - t0;
const streamRss = mem() - rss0;
t0 = performance.now();
rss0 = mem();
digestText(fs.readFileSync(hugePath, 'utf8'), opts);
const wholeMs = performance.now() - t0;
const wholeRss = mem() - rss0;
console.log(`\ndigest of a 64 MiB persisted file: streamed ${streamMs.toFixed(0)} ms (+${streamRss.toFixed(0)} MiB rss), read whole ${wholeMs.toFixed(0)} ms (+${wholeRss.toFixed(0)} MiB rss)`);
fs.rmSync(tmp, { recursive: true, force: true });
