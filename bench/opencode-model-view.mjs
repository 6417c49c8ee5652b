// What the model sees of a bash output in the real opencode, with and without
// Spillway's plugin (dist/opencode-plugin.js): the same calls in one session
// each, offline against a local chat-completions stand-in that records what it
// is sent. Per output: bytes the model got, whether the failure line, the exit
// code and a path to the whole output are in it; and each run's time, opencode
// process start to exit. Usage: node bench/opencode-model-view.mjs
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureOpencode } from '../scripts/ensure-opencode.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A failing build of about `bytes` bytes: numbered ok lines, one failure line at `at` (a fraction), exit `code`. */
function build(name, bytes, at, code, failure) {
  const lines = Math.ceil(bytes / 33);
  const n = Math.floor(lines * at) + 1;
  const awk = `BEGIN { for (i = 1; i <= ${lines}; i++) { if (i == ${n}) print "${failure}"; else printf "[%06d] unit_%d ok, 0 failed\\n", i, i } print "done: see above" }`;
  return { name, command: `awk '${awk}'; exit ${code}`, failure, code };
}

const CASES = [
  build('failing build, 300 KB, failure in the middle, exit 2', 300_000, 0.5, 2, 'error[E0308]: mismatched types in unit_mid'),
  build('failing test run, 25 KB, exit 1', 25_000, 0.3, 1, 'FAIL src/parser.test.ts > parses nested lists'),
  build('failing test run, 5 MB, exit 1', 5_000_000, 0.7, 1, 'AssertionError: expected 3 to equal 4'),
  { name: 'echo ok', command: 'echo ok', failure: 'ok', code: 0 },
];

function mock() {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const json = JSON.parse(body);
      requests.push(json);
      const done = json.messages.filter((m) => m.role === 'tool').length;
      const call = Array.isArray(json.tools) && done < CASES.length ? CASES[done] : undefined;
      const delta = call
        ? { role: 'assistant', content: null, tool_calls: [{ index: 0, id: `call_${done}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: call.command, description: 'run' }) } }] }
        : { role: 'assistant', content: 'done' };
      const chunk = (d, finish) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: d, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(chunk(delta, null) + chunk({}, call ? 'tool_calls' : 'stop') + 'data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, requests, url: `http://127.0.0.1:${server.address().port}/v1` })));
}

async function run(withPlugin) {
  const { binary, pluginHome } = await ensureOpencode();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-opencode-'));
  const home = path.join(root, 'home');
  const configDir = path.join(home, '.config', 'opencode');
  const project = path.join(root, 'project');
  fs.mkdirSync(configDir, { recursive: true });
  fs.mkdirSync(project);
  fs.cpSync(pluginHome, configDir, { recursive: true });
  const m = await mock();
  const config = {
    provider: { mock: { npm: '@ai-sdk/openai-compatible', options: { baseURL: m.url, apiKey: 'k' }, models: { m: {} } } },
    permission: { bash: { '*': 'allow' } },
    ...(withPlugin ? { plugin: [pathToFileURL(path.join(repo, 'dist', 'opencode-plugin.js')).href] } : {}),
  };
  fs.writeFileSync(path.join(configDir, 'opencode.json'), JSON.stringify(config));
  const env = { PATH: process.env.PATH, HOME: home, SHELL: '/bin/bash', XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share'), XDG_CACHE_HOME: path.join(home, '.cache'), XDG_STATE_HOME: path.join(home, '.local', 'state'), OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1', OPENCODE_DISABLE_DEFAULT_PLUGINS: '1' };
  const started = process.hrtime.bigint();
  const code = await new Promise((resolve) => spawn(binary, ['run', '--format', 'json', '-m', 'mock/m', 'go'], { cwd: project, env, stdio: 'ignore' }).on('exit', resolve));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  m.server.close();
  const last = m.requests.filter((r) => Array.isArray(r.tools)).at(-1);
  const results = last.messages.filter((x) => x.role === 'tool').map((x) => (typeof x.content === 'string' ? x.content : x.content.map((p) => p.text ?? '').join('')));
  fs.rmSync(root, { recursive: true, force: true });
  return { code, seconds, results };
}

const runs = { without: await run(false), with: await run(true) };
for (const [label, r] of Object.entries(runs)) {
  console.log(`\nopencode ${label} Spillway: exit ${r.code}, ${r.seconds.toFixed(1)} s for ${CASES.length} calls (process start to exit)`);
  CASES.forEach((c, i) => {
    const text = r.results[i] ?? '';
    const kept = text.includes(c.failure) ? 'yes' : 'no';
    const exit = new RegExp(`code ${c.code}\\b`).test(text) ? 'yes' : 'no';
    const whole = /Full output saved to: \S+|complete output \(stdout and stderr\) is in \S+/.test(text) ? 'yes' : 'no';
    console.log(`  ${c.name}: model got ${Buffer.byteLength(text).toLocaleString('en-US')} bytes; failure line ${kept}; exit code ${exit}; path to whole output ${whole}`);
  });
}
