// Helpers shared by the object-store benchmarks (bench/s3-*.mjs): a throwaway
// Ceph RGW started by the benchmark itself (test/s3/rgw.ts, its memstore sized
// for the data), the counting proxy (test/s3/proxy.ts), both compiled from the
// tests' own TypeScript; sizes (BENCH_S3_QUICK=1: small ones, so a test can run
// every benchmark), the Node start floor, and figures in MB/s.
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CORPUS } from './catalog-common.mjs';
import { measureInTurnAsync, row } from './catalog-process-common.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// The pinned SDK runs on Node 20; its notice about later versions is no figure.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
export const SDK = path.join(here, 's3-sdk-common.mjs');
export const QUICK = process.env.BENCH_S3_QUICK === '1';
/** Runs of each command, in turn (medians). */
export const RUNS = QUICK ? 1 : 3;
export const MB = 1 << 20;

/** A test helper in TypeScript, compiled once into the corpus folder (inside the repo: its imports resolve from there). */
async function loadTs(rel) {
  const source = path.join(here, '..', rel);
  const outfile = path.join(CORPUS, 's3-helpers', path.basename(rel, '.ts') + '.mjs');
  mkdirSync(path.dirname(outfile), { recursive: true });
  await esbuild.build({
    entryPoints: [source], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'warning',
    define: { __dirname: JSON.stringify(path.dirname(source)) },
  });
  return import(pathToFileURL(outfile).href);
}

/** A fresh RGW with one bucket; its memstore holds `gigabytes` (the data plus room for a second copy in flight). */
export async function startBenchRgw(bucket, gigabytes = 4) {
  const { startRgw } = await loadTs('test/s3/rgw.ts');
  const rgw = await startRgw({ memstoreBytes: Math.ceil(gigabytes * 1024) * MB });
  await rgw.createBucket(bucket);
  return rgw;
}

export async function startCountingProxy(endpoint) {
  const { startProxy } = await loadTs('test/s3/proxy.ts');
  return startProxy(endpoint);
}

/** The environment of a user whose SDK chain points at `rgw` (no proxy settings of this machine inherited). */
export function s3Env(rgw, extra = {}) {
  return { PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8', HOME: process.env.HOME, ...rgw.env, ...extra };
}

/** `node -e 0` beside the commands: the part of each figure no Node program avoids. */
export async function printNodeFloor() {
  const [floor] = await measureInTurnAsync([{ command: process.execPath, args: ['-e', '0'] }], RUNS);
  console.log(row('node -e 0 (Node start floor)', floor));
}

export const mbps = (bytes, ms) => bytes / MB / (ms / 1000);

/** `limit` promises at a time over `items`. */
export async function inParallel(items, limit, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

/** `lines` lines of 64 bytes each (numbered, so every line is its own), `needle` on one line in `every` (mid-way). */
export function textChunk(firstLine, lines, needle = '', every = 0) {
  const parts = [];
  for (let i = 0; i < lines; i++) {
    const n = firstLine + i;
    const head = every && needle && n % every === every >> 1 ? `${needle} ` : 'ok ';
    parts.push((head + `step ${n} `).padEnd(63, 'abcdefgh ') + '\n');
  }
  return Buffer.from(parts.join(''));
}

/** A file of `bytes` bytes of textChunk() lines (line N says `step N-1`), written once and then reused. */
export async function numberedFile(file, bytes) {
  if (existsSync(file) && (await fsp.stat(file)).size === bytes) return file;
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const handle = await fsp.open(file + '.part', 'w');
  for (let at = 0; at < bytes; at += MB) await handle.write(textChunk(at / 64, Math.min(MB, bytes - at) / 64));
  await handle.close();
  await fsp.rename(file + '.part', file);
  return file;
}

export async function sha256Of(file) {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk);
  return h.digest('hex');
}

/**
 * A fresh upload queue in `queue` holding `files` for `store` (agent `bench`, session `run-1`), as the spill side
 * writes it; the environment of `spillway upload` that drains it. Returns the blobs' keys under the store's prefix.
 */
export async function queueUploads(queue, store, files, env) {
  await fsp.rm(queue, { recursive: true, force: true });
  await fsp.mkdir(queue, { mode: 0o700 });
  const keys = [];
  for (const [i, file] of files.entries()) {
    const bytes = (await fsp.stat(file)).size;
    const sha256 = await sha256Of(file);
    const record = { sessionId: 'run-1', tool: 'Bash', bytes, sha256, file: path.basename(file) };
    const entry = { v: 1, store, file, bytes, sha256, agent: 'bench', sessionId: 'run-1', record };
    await fsp.writeFile(path.join(queue, `${String(i).padStart(6, '0')}-${sha256.slice(0, 16)}.pending.json`), JSON.stringify(entry) + '\n', { mode: 0o600 });
    keys.push(`bench/run-1/${sha256}.txt`);
  }
  return { env: { ...env, SPILLWAY_UPLOAD_QUEUE: queue }, keys };
}
