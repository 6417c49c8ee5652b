// Cost of a spill through LocalSpillStore + policy vs a raw fs.writeFileSync
// of the same bytes, and the cost of deciding NOT to spill a small result.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { engine, fmt, logText, median, rng } from './spill-common.mjs';

const { LocalSpillStore, createSpillPolicy, digestFile, digestText } = engine;
const work = mkdtempSync(path.join(tmpdir(), 'spillway-bench-'));
const rand = rng(1);

async function spillVsRaw(label, bytes, reps) {
  const base = logText(rand, bytes);
  const store = new LocalSpillStore({ root: path.join(work, 'root-' + bytes) });
  const policy = createSpillPolicy({ store });
  const raw = [];
  const spill = [];
  for (let i = 0; i < reps; i++) {
    const text = `rep ${i}\n` + base; // distinct bodies: no dedup hit
    let t = process.hrtime.bigint();
    writeFileSync(path.join(work, `raw-${bytes}-${i}.txt`), text);
    raw.push(Number(process.hrtime.bigint() - t) / 1e6);
    t = process.hrtime.bigint();
    const d = await policy.apply({ sessionId: 'bench', toolName: 'Bash', toolCallId: `c${i}`, output: text });
    spill.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (!d.spilled) throw new Error('expected a spill: ' + d.reason);
  }
  const r = median(raw);
  const s = median(spill);
  console.log(`${label.padEnd(6)} raw writeFileSync ${fmt(r, 2).padStart(8)} ms | policy+store spill ${fmt(s, 2).padStart(8)} ms | ratio ${fmt(s / r, 2)}x  (median of ${reps})`);
  // Where the time goes, on the same bytes.
  const buf = Buffer.from(base);
  let t = process.hrtime.bigint();
  (await import('node:crypto')).createHash('sha256').update(buf).digest('hex');
  const hashMs = Number(process.hrtime.bigint() - t) / 1e6;
  t = process.hrtime.bigint();
  digestText(base, { budgetBytes: 3072, toolName: 'Bash', locator: '/x/y.txt' });
  const digestMs = Number(process.hrtime.bigint() - t) / 1e6;
  console.log(`       of which: sha256 ${fmt(hashMs, 2)} ms, digest ${fmt(digestMs, 2)} ms, (UTF-8 encode, write, manifest: the rest)`);
}

async function decisionCost() {
  const policy = createSpillPolicy({ store: new LocalSpillStore({ root: path.join(work, 'decide') }) });
  const small = logText(rand, 500);
  const cases = [
    ['small string (500 B)', { sessionId: 's', toolName: 'Bash', toolCallId: 'c', output: small }],
    ['small Bash object', { sessionId: 's', toolName: 'Bash', toolCallId: 'c', output: { stdout: small, stderr: '', interrupted: false } }],
    ['Read of 1 MB (skipped)', { sessionId: 's', toolName: 'Read', toolCallId: 'c', output: logText(rand, 1 << 20) }],
  ];
  for (const [label, req] of cases) {
    const n = 200_000;
    for (let i = 0; i < 10_000; i++) await policy.apply(req);
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await policy.apply(req);
    const ns = Number(process.hrtime.bigint() - t) / n;
    console.log(`decision, ${label.padEnd(24)} ${fmt(ns, 0).padStart(7)} ns/op (not spilled)`);
  }
  // Baseline on the same machine: an empty awaited async call.
  const noop = async (x) => x;
  const n = 200_000;
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await noop(i);
  console.log(`baseline, empty awaited async call ${fmt(Number(process.hrtime.bigint() - t) / n, 0).padStart(7)} ns/op`);
}

// Each variant in its own process, started through a shell that forks it: Linux starts a child's peak RSS at its
// parent's (kept across exec), and this process holds the log it wrote.
async function digestHugeFile() {
  const file = path.join(work, 'huge.log');
  const chunk = logText(rand, 8 << 20);
  const { openSync, writeSync, closeSync } = await import('node:fs');
  const fd = openSync(file, 'w');
  for (let i = 0; i < 25; i++) writeSync(fd, chunk); // ~200 MB
  closeSync(fd);
  const { execFileSync } = await import('node:child_process');
  const run = (variant) => JSON.parse(execFileSync('sh', ['-c', '"$@"; exit', 'sh', process.execPath, new URL(import.meta.url).pathname, '--huge', variant, file], { encoding: 'utf8' }));
  const a = run('file');
  const b = run('whole');
  console.log(
    `digest of a 200 MB log: digestFile ${fmt(a.ms, 0)} ms, peak RSS ${fmt(a.maxRssMb, 0)} MB | readFileSync+digestText ${fmt(b.ms, 0)} ms, peak RSS ${fmt(b.maxRssMb, 0)} MB | same output: ${a.sha === b.sha}`,
  );
}

async function hugeChild(variant, file) {
  const { readFileSync } = await import('node:fs');
  const { createHash } = await import('node:crypto');
  const opts = { budgetBytes: 3072, toolName: 'Bash', locator: file };
  const t = process.hrtime.bigint();
  const out = variant === 'file' ? await digestFile(file, opts) : digestText(readFileSync(file, 'utf8'), opts);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  console.log(JSON.stringify({ ms, maxRssMb: process.resourceUsage().maxRSS / 1024, sha: createHash('sha256').update(out).digest('hex') }));
}

if (process.argv[2] === '--huge') {
  rmSync(work, { recursive: true, force: true });
  await hugeChild(process.argv[3], process.argv[4]);
  process.exit(0);
}
await spillVsRaw('1 MB', 1 << 20, 15);
await spillVsRaw('10 MB', 10 << 20, 7);
await decisionCost();
await digestHugeFile();
rmSync(work, { recursive: true, force: true });
