// Helpers shared by the catalog benchmarks: the built library, a corpus
// folder (gitignored, reused between runs), timing and a bare walk.
import { createRequire } from 'node:module';
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
/** The built library (run `npm run build` first; `npm run bench` does). */
export const lib = require(path.join(here, '..', 'dist', 'index.js'));
export const CORPUS = path.join(here, '.corpus');

export const ms = (ns) => Number(ns) / 1e6;
export const now = () => process.hrtime.bigint();
export const fmt = (n, digits = 1) => n.toFixed(digits);

/**
 * Claude Code layout: `sessions` sessions with `perSession` blobs each, a
 * transcript naming every blob's tool call. Every tenth blob ends in a line
 * holding NEEDLE (something for grep to find). Written once, reused.
 */
export async function claudeCorpus(name, sessions, perSession, blobBytes = 2048) {
  const root = path.join(CORPUS, name);
  const marker = path.join(root, '.complete');
  if (existsSync(marker)) return root;
  await fsp.rm(root, { recursive: true, force: true });
  const body = ('x'.repeat(79) + '\n').repeat(Math.ceil(blobBytes / 80)).slice(0, blobBytes);
  const withNeedle = body.slice(0, Math.max(0, blobBytes - 40)) + 'ERROR: NEEDLE connection reset by peer\n';
  for (let s = 0; s < sessions; s++) {
    const id = `${String(s).padStart(8, '0')}-0000-4000-8000-000000000000`;
    const project = path.join(root, 'projects', `-home-dev-project-${s % 25}`);
    const toolResults = path.join(project, id, 'tool-results');
    await fsp.mkdir(toolResults, { recursive: true });
    const lines = [];
    const writes = [];
    for (let b = 0; b < perSession; b++) {
      const toolUseId = `toolu_${String(s).padStart(6, '0')}${String(b).padStart(6, '0')}`;
      if (writes.length >= 1000) await Promise.all(writes.splice(0));
      writes.push(fsp.writeFile(path.join(toolResults, `${toolUseId}.txt`), (s * perSession + b) % 10 === 0 ? withNeedle : body));
      const ts = new Date(Date.UTC(2026, 0, 1, 0, 0, s * 60 + b)).toISOString();
      lines.push(JSON.stringify({ type: 'assistant', sessionId: id, cwd: '/home/dev/p', isSidechain: false, timestamp: ts, message: { id: `msg_${s}_${b}`, model: 'm', role: 'assistant', content: [{ type: 'tool_use', id: toolUseId, name: 'Bash', input: { command: `make target-${b}` } }], usage: { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 * b, output_tokens: 20 } } }));
      lines.push(JSON.stringify({ type: 'user', sessionId: id, isSidechain: false, timestamp: ts, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: `<persisted-output>\nFull output saved to: ${path.join(toolResults, toolUseId + '.txt')}\n</persisted-output>` }] } }));
    }
    await Promise.all(writes.splice(0));
    await fsp.writeFile(path.join(project, `${id}.jsonl`), lines.join('\n') + '\n');
  }
  await fsp.writeFile(marker, '');
  return root;
}

export { bareWalk } from './walk-common.mjs';

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
