// What the Bash capture (the shell prefix claude-code-prefix.sh) adds to each
// Bash call, beside the same calls without it, in the same run, interleaved so
// machine noise hits both alike:
// 1. the process Claude Code starts per call, start to exit: `bash -c "<prefix>
//    -s /bin/bash <node> '<generated string>'"` vs `bash -c '<generated string>'`,
//    stdout and stderr one O_APPEND output file, on a mixed set of calls (small
//    outputs, a failure, a 300 KB failing build that the prefix digests);
// 2. the real Claude Code 2.1.332 (offline, against the tests' mock Messages
//    API), sessions of those calls (small outputs only; and with the large
//    build) with Spillway installed and without, process start to exit, per call.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli.js');
const prefixScript = path.join(root, 'dist', 'claude-code-prefix.sh');
if (!fs.existsSync(prefixScript)) throw new Error('build first: npm run build');
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 3);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-prefix-'));
const sid = '00000000-bench-4000-8000-000000000000';
const configDir = path.join(tmp, 'claude');
fs.mkdirSync(path.join(configDir, 'projects', '-bench'), { recursive: true });
fs.writeFileSync(path.join(configDir, 'projects', '-bench', `${sid}.jsonl`), '{}\n');

const CALLS = {
  'echo ok': 'echo ok',
  'ls -la': 'ls -la /usr/bin | head -40',
  'grep in a file': `grep -n root /etc/passwd`,
  'failing: exit 1': 'echo "error: bad input" >&2; exit 1',
  'cd + pwd': 'cd / && pwd',
  'seq 1 300': 'seq 1 300',
  'failing 300 KB build': `seq 1 9000 | sed 's/$/ compiled ok, 0 failed/'; echo "error: undefined reference to main_loop"; seq 9001 12000 | sed 's/$/ compiled ok/'; exit 2`,
};
const generated = (cmd) => `eval '${cmd.replaceAll("'", `'\\''`)}' < /dev/null && pwd -P >| ${path.join(tmp, 'cwd')}`;

function timeCall(argv) {
  const outFile = path.join(tmp, `bprefix${Math.random().toString(36).slice(2, 8)}.output`);
  const fd = fs.openSync(outFile, 'a', 0o600);
  const t0 = performance.now();
  spawnSync(argv[0], argv.slice(1), { cwd: tmp, stdio: ['ignore', fd, fd], env: { ...process.env, CLAUDE_CONFIG_DIR: configDir, CLAUDE_CODE_SESSION_ID: sid } });
  const ms = performance.now() - t0;
  fs.closeSync(fd);
  fs.rmSync(outFile);
  return ms;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const per = {};
for (let i = 0; i < RUNS; i++) {
  for (const [name, cmd] of Object.entries(CALLS)) {
    const s = generated(cmd);
    (per[name] ??= { without: [], with: [] }).without.push(timeCall(['/bin/bash', '-c', s]));
    per[name].with.push(timeCall(['/bin/bash', '-c', `${prefixScript} -s /bin/bash ${process.execPath} '${s.replaceAll("'", `'\\''`)}'`]));
  }
}
fs.rmSync(path.join(configDir, 'projects', '-bench', sid), { recursive: true, force: true });
console.log(`Bash call as Claude Code starts it, ${RUNS} runs each (ms, wall, median; ${os.cpus().length} cpus, load ${os.loadavg()[0].toFixed(1)})`);
console.log(`${'call'.padEnd(24)}${'without'.padStart(9)}${'with'.padStart(9)}${'added'.padStart(9)}${'ratio'.padStart(8)}`);
let sumWithout = 0;
let sumWith = 0;
for (const [name, { without, with: w }] of Object.entries(per)) {
  const a = median(without);
  const b = median(w);
  sumWithout += a;
  sumWith += b;
  console.log(`${name.padEnd(24)}${a.toFixed(1).padStart(9)}${b.toFixed(1).padStart(9)}${(b - a >= 0 ? '+' : '') + (b - a).toFixed(1).padStart(8)}${(b / a).toFixed(2).padStart(8)}x`);
}
const small = Object.keys(CALLS).filter((n) => !n.includes('300 KB'));
const sw = small.reduce((t, n) => t + median(per[n].without), 0);
const sp = small.reduce((t, n) => t + median(per[n].with), 0);
console.log(`mixed set, sum of medians: without ${sumWithout.toFixed(1)}, with ${sumWith.toFixed(1)} (${(sumWith / sumWithout).toFixed(2)}x); small outputs only: ${(sp / sw).toFixed(2)}x, +${((sp - sw) / small.length).toFixed(1)} ms per call`);

// 2. The real binary.
const claudeBin = path.join(root, 'node_modules', '@anthropic-ai', 'claude-agent-sdk-linux-x64', 'claude');
if (!fs.existsSync(claudeBin)) {
  console.log('\n(the Claude Code binary is missing: npm ci installs it; real-binary part skipped)');
} else {
  const bundled = await esbuild.build({ entryPoints: [path.join(root, 'test', 'integration', 'adapters', 'helpers', 'mock-anthropic.ts')], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'silent' });
  const mockFile = path.join(tmp, 'mock.mjs');
  fs.writeFileSync(mockFile, bundled.outputFiles[0].text);
  const { startMockAnthropic, bashScript, offlineClaudeEnv, claudeDirs } = await import(pathToFileURL(mockFile).href);
  const runSession = async (spillway, commands) => {
    const home = fs.mkdtempSync(path.join(tmp, spillway ? 'with-' : 'without-'));
    const dirs = claudeDirs(home);
    if (spillway) spawnSync(process.execPath, [cli, 'hook', 'install', 'claude-code', '--user'], { env: { ...process.env, CLAUDE_CONFIG_DIR: dirs.configDir } });
    const mock = await startMockAnthropic(bashScript(commands, 'done'));
    const t0 = performance.now();
    await new Promise((resolve, reject) => {
      const child = spawn(claudeBin, ['-p', 'go', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions'], { cwd: dirs.workDir, env: offlineClaudeEnv({ home, configDir: dirs.configDir, baseUrl: mock.url }), stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', resolve);
    });
    const ms = performance.now() - t0;
    await mock.close();
    return ms;
  };
  const mixes = {
    'small outputs': Object.entries(CALLS).filter(([n]) => !n.includes('300 KB')).flatMap(([, c]) => [c, c]),
    'with the 300 KB build': Object.values(CALLS).flatMap((c) => [c, c]),
  };
  console.log(`\nreal Claude Code 2.1.332, ${SESSIONS} sessions each, interleaved, process start to exit (ms, median; load ${os.loadavg()[0].toFixed(1)}):`);
  for (const [mix, commands] of Object.entries(mixes)) {
    const sessions = { without: [], with: [] };
    for (let i = 0; i < SESSIONS; i++) {
      sessions.without.push(await runSession(false, commands));
      sessions.with.push(await runSession(true, commands));
    }
    const a = median(sessions.without);
    const b = median(sessions.with);
    console.log(`  ${mix}, ${commands.length} Bash calls: without Spillway ${a.toFixed(0)}, with ${b.toFixed(0)}: ${(b / a).toFixed(2)}x, ${((b - a) / commands.length).toFixed(1)} ms added per call`);
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
