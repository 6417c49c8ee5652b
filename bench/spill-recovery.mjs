// The recovery curve: how much tool-result mass leaves the context, and how
// many calls are touched, at each threshold — on a generated corpus that
// follows a measured size distribution of real tool results (p50 451, p75 1,583,
// p90 3,506, p95 5,138, p99 11,739, max 59,805, mean 1,370 chars).
// Every spilled call still costs its real digest (built by digestText with a
// realistic path), so thresholds near the digest size show their true net.
import { engine, fmt, logText, rng } from './spill-common.mjs';

const { digestText, utf8Bytes } = engine;
const rand = rng(3);
const N = 20_000;
// Quantile anchors (fraction, chars); log-linear between them.
const Q = [
  [0, 30],
  [0.5, 451],
  [0.75, 1583],
  [0.9, 3506],
  [0.95, 5138],
  [0.99, 11739],
  [0.999, 24000],
  [1, 59805],
];
function sample(u) {
  for (let i = 1; i < Q.length; i++) {
    const [p1, v1] = Q[i];
    const [p0, v0] = Q[i - 1];
    if (u <= p1) return Math.round(Math.exp(Math.log(v0) + ((u - p0) / (p1 - p0)) * (Math.log(v1) - Math.log(v0))));
  }
  return Q[Q.length - 1][1];
}
const sizes = Array.from({ length: N }, () => sample(rand()));
sizes[0] = 59805; // the measured max is in the corpus
const sorted = [...sizes].sort((a, b) => a - b);
const q = (p) => sorted[Math.min(N - 1, Math.floor(p * N))];
const total = sizes.reduce((a, b) => a + b, 0);
console.log(
  `corpus: ${N} results; p50 ${q(0.5)}, p75 ${q(0.75)}, p90 ${q(0.9)}, p95 ${q(0.95)}, p99 ${q(0.99)}, max ${sorted[N - 1]}, mean ${fmt(total / N, 0)} (target mean 1,370)`,
);

// Real texts of those sizes (log lines), digested for real.
const bodies = new Map();
const body = (n) => {
  if (!bodies.has(n)) bodies.set(n, logText(rng(n), n).slice(0, n));
  return bodies.get(n);
};
const LOCATOR = '/home/dev/.local/state/spillway/spills/session-0123456789ab/0123456789ab-Bash-toolu_01ABCDEFGHJKLMNPQRSTUVWX.txt';
const HINT = 'Use read with offset/limit on this path, or grep it to search within it.';

const thresholds = [1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 32768];
const digests = [1024, 1536, 2048, 3072, 4096];
const rows = [];
for (const D of digests) {
  const digestCost = new Map();
  const costOf = (n) => {
    if (!digestCost.has(n)) digestCost.set(n, utf8Bytes(digestText(body(n), { budgetBytes: D, toolName: 'Bash', locator: LOCATOR, retrievalHint: HINT })));
    return digestCost.get(n);
  };
  for (const T of thresholds) {
    if (T <= D) continue;
    let touched = 0;
    let saved = 0;
    for (const n of sizes) {
      if (n <= T) continue;
      touched++;
      saved += n - costOf(n);
    }
    rows.push({ D, T, touched: touched / N, recovered: saved / total });
  }
}
console.log('\nnet mass recovered (after paying for the digests) vs calls touched');
console.log('digest  threshold  calls touched  mass recovered  recovered per 1% of calls touched');
for (const r of rows) {
  console.log(
    `${String(r.D).padStart(6)}  ${String(r.T).padStart(9)}  ${(fmt(r.touched * 100) + '%').padStart(13)}  ${(fmt(r.recovered * 100) + '%').padStart(14)}  ${fmt(r.recovered / Math.max(r.touched, 1e-9), 2).padStart(10)}`,
  );
}

// The knee: below some threshold each extra call touched saves less than an
// average result's size (under 1% of the mass per 1% of calls).
console.log('\nmarginal return when lowering the threshold one step (same digest)');
for (const D of digests) {
  const rs = rows.filter((r) => r.D === D).sort((a, b) => b.T - a.T);
  const steps = [];
  for (let i = 1; i < rs.length; i++) {
    const dm = rs[i].recovered - rs[i - 1].recovered;
    const dc = rs[i].touched - rs[i - 1].touched;
    steps.push(`${rs[i - 1].T}->${rs[i].T}: ${fmt(dc > 0 ? dm / dc : 0, 2)}`);
  }
  console.log(`digest ${String(D).padStart(4)}  ${steps.join('  ')}`);
}
