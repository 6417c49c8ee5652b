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
 * Claude Code's layout: `sessions` sessions of `perSession` blobs, each
 * session's transcript made of `turn({ id, s, b, ts, toolUseId, file })`'s
 * lines for each of its blobs (`file`: where the blob is, named by `blobName`).
 */
function claudeLayout(name, sessions, perSession, blobBytes, { blobName, turn }) {
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
        const file = path.join(toolResults, `${blobName(s * perSession + b, toolUseId)}.txt`);
        if (writes.length >= 1000) await Promise.all(writes.splice(0));
        writes.push(fsp.writeFile(file, body(s * perSession + b)));
        const ts = new Date(Date.UTC(2026, 0, 1, 0, 0, s * 60 + b)).toISOString();
        lines.push(...turn({ id, s, b, ts, toolUseId, file }).map((line) => JSON.stringify(line)));
      }
      await Promise.all(writes.splice(0));
      await fsp.writeFile(path.join(project, `${id}.jsonl`), lines.join('\n') + '\n');
    }
  });
}

/**
 * Claude Code layout with lean transcripts (about 600 bytes per blob): each
 * blob's tool call and its result naming the blob. Every tenth blob ends in a
 * line holding NEEDLE (something for grep to find). Written once, reused.
 */
export function claudeCorpus(name, sessions, perSession, blobBytes = 2048) {
  return claudeLayout(name, sessions, perSession, blobBytes, {
    blobName: (_, toolUseId) => toolUseId,
    turn: ({ id, s, b, ts, toolUseId, file }) => [
      { type: 'assistant', sessionId: id, cwd: '/home/dev/p', isSidechain: false, timestamp: ts, message: { id: `msg_${s}_${b}`, model: 'm', role: 'assistant', content: [{ type: 'tool_use', id: toolUseId, name: 'Bash', input: { command: `make target-${b}` } }], usage: { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 * b, output_tokens: 20 } } },
      { type: 'user', sessionId: id, isSidechain: false, timestamp: ts, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: `<persisted-output>\nFull output saved to: ${file}\n</persisted-output>` }] } },
    ],
  });
}

/**
 * Claude Code's layout with transcripts as Claude Code 2.1 writes them (the
 * fixtures' shape): each spilled result's line holds a 2 KB preview and, in
 * `toolUseResult`, the output again up to 30,000 characters; between spills,
 * a file read (code, dense with quotes, given twice: in the message and in
 * `toolUseResult.file`) and an attachment; each session opens with a 56 KB
 * prompt snapshot (system prompt and tool schemas). Attachments have `type`
 * after their body, as Claude Code writes them. About 68 KB of transcript
 * per blob, where claudeCorpus writes 600 bytes. Written once, reused.
 */
export function claudeRealCorpus(name, sessions, perSession, blobBytes = 2048) {
  const log = Array.from({ length: 400 }, (_, i) => `[${String(i).padStart(4, '0')}] src/module-${i % 37}/file-${i % 11}.ts(${i},5): warning TS6133: 'value${i}' is declared but never read.`).join('\n').slice(0, 30000);
  const code = Array.from({ length: 160 }, (_, i) => `${String(i + 1).padStart(6)}\t  const field${i} = options["field${i}"] ?? "default-${i}"; // see "docs/${i}.md"`).join('\n');
  const common = (id, ts) => ({ userType: 'external', entrypoint: 'cli', cwd: '/home/dev/p', sessionId: id, version: '2.1.332', gitBranch: 'main', timestamp: ts });
  const assistant = (id, ts, s, k, toolUseId, input, name) => ({ parentUuid: `p${k}`, isSidechain: false, message: { id: `msg_${s}_${k}`, type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'Let me look at that.' }, { type: 'tool_use', id: toolUseId, name, input }], stop_reason: 'tool_use', usage: { input_tokens: 4, cache_creation_input_tokens: 300, cache_read_input_tokens: 2000 * k, output_tokens: 70 } }, type: 'assistant', uuid: `a${k}`, ...common(id, ts) });
  const attachment = (id, ts, k, body) => ({ parentUuid: `u${k}`, isSidechain: false, attachment: body, type: 'attachment', uuid: `t${k}`, ...common(id, ts) });
  const prose = Array.from({ length: 120 }, (_, i) => `- Rule ${i}: when the user says "run it", use the "Bash" tool with \`npm test -- --grep "case ${i}"\`; never "guess".`).join('\n');
  const tools = Array.from({ length: 24 }, (_, i) => ({ name: `Tool${i}`, description: prose.slice(i * 400, i * 400 + 1200), input_schema: { type: 'object', properties: { path: { type: 'string', description: 'The "absolute" path' }, limit: { type: 'number' } }, required: ['path'] } }));
  const result = (id, ts, k, toolUseId, content, toolUseResult) => ({ parentUuid: `a${k}`, isSidechain: false, promptId: 'q', type: 'user', message: { role: 'user', content: [{ tool_use_id: toolUseId, type: 'tool_result', content, is_error: false }] }, uuid: `u${k}`, toolUseResult, sourceToolAssistantUUID: `a${k}`, ...common(id, ts) });
  return claudeLayout(name, sessions, perSession, blobBytes, {
    // Named apart from the call: the blob is found by the path its result gives.
    blobName: (n) => `b${String(n).padStart(9, '0')}`,
    turn: ({ id, s, b, ts, toolUseId, file }) => {
      const readId = toolUseId.replace('toolu_', 'toolu_r');
      const digest = `<persisted-output>\nOutput too large (340.7KB). Full output saved to: ${file}\n\nPreview (first 2KB):\n${log.slice(0, 2000)}\n...\n</persisted-output>`;
      return [
        ...(b === 0 ? [attachment(id, ts, 0, { type: 'prompt_snapshot', systemPrompt: prose, tools })] : []),
        assistant(id, ts, s, 3 * b, readId, { file_path: `/home/dev/p/src/file-${b}.ts` }, 'Read'),
        result(id, ts, 3 * b, readId, code, { type: 'text', file: { filePath: `/home/dev/p/src/file-${b}.ts`, content: code, numLines: 160, startLine: 1, totalLines: 160 } }),
        attachment(id, ts, 3 * b, { type: 'todo_reminder', content: code.slice(0, 2000) }),
        assistant(id, ts, s, 3 * b + 1, toolUseId, { command: `npm run build -- --target ${b}`, description: 'Build' }, 'Bash'),
        result(id, ts, 3 * b + 1, toolUseId, digest, { stdout: log, stderr: '', interrupted: false, isImage: false, noOutputExpected: false, persistedOutputPath: file, persistedOutputSize: 348894 }),
      ];
    },
  });
}

/**
 * `total` sessions copied in turn from the real Claude Code 2.1.332 sessions in test/fixtures (each transcript with
 * its ids made new, and its tool-results): transcripts exactly as Claude Code writes them, attachments and
 * bookkeeping lines included. Written once, reused.
 */
export function claudeFixtureCopies(name, total) {
  const fixtures = path.join(here, '..', 'test', 'fixtures', 'claude-code-2.1.332');
  return writtenOnce(name, async (root) => {
    const sessions = [];
    for (const run of await fsp.readdir(fixtures)) {
      const projects = path.join(fixtures, run, 'projects');
      if (!existsSync(projects)) continue;
      for (const project of await fsp.readdir(projects)) {
        for (const file of await fsp.readdir(path.join(projects, project))) if (file.endsWith('.jsonl')) sessions.push([path.join(projects, project), file.slice(0, -'.jsonl'.length)]);
      }
    }
    for (let n = 0; n < total; n++) {
      const [dir, id] = sessions[n % sessions.length];
      const project = path.join(root, 'projects', `-home-dev-project-${n % 25}`);
      const copy = `${id.slice(0, -8)}${String(n).padStart(8, '0')}`;
      await fsp.mkdir(path.join(project, copy), { recursive: true });
      await fsp.writeFile(path.join(project, `${copy}.jsonl`), (await fsp.readFile(path.join(dir, `${id}.jsonl`), 'utf8')).replaceAll(id, copy));
      await fsp.cp(path.join(dir, id, 'tool-results'), path.join(project, copy, 'tool-results'), { recursive: true });
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
