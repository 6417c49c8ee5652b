// Helpers shared by the spill benchmarks: the built engine and generated data.
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
/** The built library (run `npm run build` first; `npm run bench` does). */
export const engine = require(path.join(here, '..', 'dist', 'index.js'));

/** Deterministic PRNG (mulberry32) so every run sees the same corpus. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['compiling', 'module', 'src/app.ts', 'bundle', 'chunk', 'resolve', 'transform', 'emit', 'cache', 'hit', 'ok', 'done', 'ms', 'kB', 'test', 'pass'];

/** One plausible build/test log line (no failure words). */
export function logLine(rand, i) {
  const n = 3 + Math.floor(rand() * 9);
  const parts = [];
  for (let k = 0; k < n; k++) parts.push(WORDS[Math.floor(rand() * WORDS.length)]);
  return `[${String(i).padStart(6, '0')}] ${parts.join(' ')}`;
}

/** Text of about `bytes` bytes made of log lines. */
export function logText(rand, bytes) {
  const lines = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const l = logLine(rand, i);
    lines.push(l);
    size += l.length + 1;
  }
  return lines.join('\n') + '\n';
}

export function fmt(n, digits = 1) {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * A TypeScript module of this repo (a test helper), bundled by esbuild into a
 * temp file and imported, so benchmarks reuse the tests' code instead of a copy.
 */
export async function importTs(relPath) {
  const esbuild = await import('esbuild');
  const os = await import('node:os');
  const fs = await import('node:fs');
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-ts-')), 'module.mjs');
  await esbuild.build({ entryPoints: [path.join(here, '..', relPath)], bundle: true, platform: 'node', format: 'esm', outfile: out, logLevel: 'warning' });
  return import(out);
}
