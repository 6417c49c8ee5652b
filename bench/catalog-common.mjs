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

/** The corpus folder `name`, made by `write` the first time (a `.complete` marker says it was made whole), then reused. */
async function writtenOnce(name, write) {
  const root = path.join(CORPUS, name);
  const marker = path.join(root, '.complete');
  if (existsSync(marker)) return root;
  await fsp.rm(root, { recursive: true, force: true });
  await write(root);
  await fsp.writeFile(marker, '');
  return root;
}

/**
 * Claude Code layout: `sessions` sessions with `perSession` blobs each, a
 * transcript naming every blob's tool call. Every tenth blob ends in a line
 * holding NEEDLE (something for grep to find). Written once, reused.
 */
export function claudeCorpus(name, sessions, perSession, blobBytes = 2048) {
  return writtenOnce(name, async (root) => {
    const body = blobBody(blobBytes);
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
        writes.push(fsp.writeFile(path.join(toolResults, `${toolUseId}.txt`), body(s * perSession + b)));
        const ts = new Date(Date.UTC(2026, 0, 1, 0, 0, s * 60 + b)).toISOString();
        lines.push(JSON.stringify({ type: 'assistant', sessionId: id, cwd: '/home/dev/p', isSidechain: false, timestamp: ts, message: { id: `msg_${s}_${b}`, model: 'm', role: 'assistant', content: [{ type: 'tool_use', id: toolUseId, name: 'Bash', input: { command: `make target-${b}` } }], usage: { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 * b, output_tokens: 20 } } }));
        lines.push(JSON.stringify({ type: 'user', sessionId: id, isSidechain: false, timestamp: ts, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: `<persisted-output>\nFull output saved to: ${path.join(toolResults, toolUseId + '.txt')}\n</persisted-output>` }] } }));
      }
      await Promise.all(writes.splice(0));
      await fsp.writeFile(path.join(project, `${id}.jsonl`), lines.join('\n') + '\n');
    }
  });
}

/** Blob bodies of `blobBytes`; every tenth (by `i`) ends in a line holding NEEDLE. */
function blobBody(blobBytes) {
  const body = ('x'.repeat(79) + '\n').repeat(Math.ceil(blobBytes / 80)).slice(0, blobBytes);
  const withNeedle = body.slice(0, Math.max(0, blobBytes - 40)) + 'ERROR: NEEDLE connection reset by peer\n';
  return (i) => (i % 10 === 0 ? withNeedle : body);
}

/**
 * pi's layout: `sessions` sessions in `sessions/--<cwd>--/`, each a transcript
 * `<time>_<id>.jsonl` and `<id>-blobs/` of `perSession` blobs named after
 * their tool calls' ids ('|' made '_'), which only the transcript's toolCall
 * blocks name (no index entry). Every tenth blob holds NEEDLE. Written once, reused.
 */
export function piCorpus(name, sessions, perSession, blobBytes = 2048) {
  return writtenOnce(name, async (root) => {
    const body = blobBody(blobBytes);
    for (let s = 0; s < sessions; s++) {
      const id = `${String(s).padStart(8, '0')}-0000-7000-8000-000000000000`;
      const folder = path.join(root, 'sessions', `--home-dev-project-${s % 25}--`);
      const blobs = path.join(folder, `${id}-blobs`);
      await fsp.mkdir(blobs, { recursive: true });
      const at = (b) => new Date(Date.UTC(2026, 0, 1, 0, 0, s * 60 + b)).toISOString();
      const lines = [{ type: 'session', version: 3, id, timestamp: at(0), cwd: `/home/dev/project-${s % 25}` }];
      const writes = [];
      for (let b = 0; b < perSession; b++) {
        const callId = `toolu_${String(s).padStart(6, '0')}${String(b).padStart(6, '0')}|fc_${b}`;
        if (writes.length >= 1000) await Promise.all(writes.splice(0));
        writes.push(fsp.writeFile(path.join(blobs, `${callId.replace('|', '_')}.txt`), body(s * perSession + b)));
        const message = { role: 'assistant', content: [{ type: 'toolCall', id: callId, name: 'bash', arguments: { command: `make target-${b}` } }], usage: { input: 10, output: 20, cacheRead: 1000 * b, cacheWrite: 100 } };
        lines.push({ type: 'message', id: `a${b}`, parentId: b === 0 ? null : `r${b - 1}`, timestamp: at(b), message });
        lines.push({ type: 'message', id: `r${b}`, parentId: `a${b}`, timestamp: at(b), message: { role: 'toolResult', toolCallId: callId, toolName: 'bash', content: [{ type: 'text', text: 'spilled' }] } });
      }
      await Promise.all(writes.splice(0));
      await fsp.writeFile(path.join(folder, `${at(0).replace(/[:.]/g, '-')}_${id}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    }
  });
}

/**
 * goose's layout: `files` MCP responses in one `goose_mcp_responses/` folder,
 * named by time only (a folder grep searches file by file: goose writes it
 * in TMPDIR, which may hold anything). Every tenth holds NEEDLE. Written once, reused.
 */
export function gooseCorpus(name, files, blobBytes = 2048) {
  return writtenOnce(name, async (root) => {
    const folder = path.join(root, 'goose_mcp_responses');
    await fsp.mkdir(folder, { recursive: true });
    const body = blobBody(blobBytes);
    const writes = [];
    for (let i = 0; i < files; i++) {
      // mcp_response_<YYYYMMDD_HHMMSS.ffffff>.txt, one second apart.
      const stamp = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().replace(/[-:]/g, '').replace('T', '_').replace(/\.(\d{3})Z$/, '.$1000');
      if (writes.length >= 1000) await Promise.all(writes.splice(0));
      writes.push(fsp.writeFile(path.join(folder, `mcp_response_${stamp}.txt`), body(i)));
    }
    await Promise.all(writes);
  });
}

export { bareWalk } from './walk-common.mjs';

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
