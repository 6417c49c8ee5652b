// End to end on the REAL Claude Code CLI (the `claude` binary of
// @anthropic-ai/claude-agent-sdk-linux-x64), offline: it talks to a mock
// Messages API on 127.0.0.1, with Spillway's hook installed by
// `spillway hook install claude-code` into a temp CLAUDE_CONFIG_DIR. The mock
// asks for two Bash commands (about 10 KB and 300 KB of output, each with a
// failure line) and records what Claude Code sends next.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/spill/manifest';
import { bashScript, CLAUDE_BIN_RELATIVE, claudeDirs, offlineClaudeEnv, runClaude, startMockAnthropic, toolResults, type MockAnthropic } from './helpers/mock-anthropic';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');
const claudeBin = path.join(repoRoot, ...CLAUDE_BIN_RELATIVE);

// ~10 KB: 300 build lines, a compiler error at line 281, a verdict at the end.
const CMD_10K = `for i in $(seq 1 300); do echo "step $i: compiling module_$i ok"; if [ $i = 280 ]; then echo "error TS2322: Type 'string' is not assignable to type 'number' (src/m280.ts:12:5)"; fi; done; echo "BUILD FAILED with 1 error"`;
// ~300 KB: a failure line in the middle, a summary line at the very end.
const CMD_300K = `seq 1 8000 | sed 's/$/ processed record ok/'; echo "FATAL: checksum mismatch in shard 7"; seq 8001 14000 | sed 's/$/ processed record ok/'; echo "exit summary: 1 shard failed"`;

let tmp: string;
let configDir: string;
let workDir: string;
let mock: MockAnthropic;
let run: { code: number | null; stdout: string; stderr: string };

function bashOutput(command: string): string {
  return spawnSync('bash', ['-c', command], { encoding: 'utf8', maxBuffer: 16 << 20 }).stdout;
}

beforeAll(async () => {
  if (!fs.existsSync(cli)) throw new Error('run `npm run build` first: dist/cli.js is missing');
  if (!fs.existsSync(claudeBin)) throw new Error(`the Claude Code binary is missing: ${claudeBin} (npm ci installs it)`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-cc-e2e-'));
  ({ configDir, workDir } = claudeDirs(tmp));

  const install = spawnSync(process.execPath, [cli, 'hook', 'install', 'claude-code', '--user'], {
    encoding: 'utf8',
    env: { ...process.env, CLAUDE_CONFIG_DIR: configDir },
  });
  expect(install.status, install.stderr).toBe(0);
  expect(install.stdout).toContain('added PostToolUse hook');
  expect(install.stdout).toContain('set env.CLAUDE_CODE_SHELL_PREFIX');
  expect(install.stdout).toContain(path.join(repoRoot, 'dist', 'hook.js'));
  // The PostToolUse path alone on Bash (as the Agent SDK runs it with spillHook() on Bash and no shell prefix):
  // the installed hook, its matcher narrowed to Bash, and no prefix. claude-code-capture-e2e.test.ts covers the prefix.
  const settingsFile = path.join(configDir, 'settings.json');
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
  delete settings.env;
  settings.hooks.PostToolUse[0].matcher = 'Bash';
  fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));

  mock = await startMockAnthropic(bashScript([CMD_10K, CMD_300K], 'The build failed; see above.'));

  const env = offlineClaudeEnv({ home: tmp, configDir, baseUrl: mock.url });
  run = await runClaude({ bin: claudeBin, prompt: 'Build and process the records', cwd: workDir, env });
}, 180_000);

afterAll(async () => {
  await mock?.close();
  if (tmp && !process.env.KEEP_E2E) fs.rmSync(tmp, { recursive: true, force: true });
  if (process.env.KEEP_E2E) console.log('KEPT', tmp);
});

/** The Claude Code session folder (`projects/<enc>/<sessionId>/`). */
function sessionFolder(): string {
  const projects = path.join(configDir, 'projects');
  const [enc] = fs.readdirSync(projects);
  const dir = path.join(projects, enc!);
  const sub = fs.readdirSync(dir).find((f) => fs.statSync(path.join(dir, f)).isDirectory());
  return path.join(dir, sub!);
}

function resultTextFor(commandFragment: string): string {
  // The last request carries every tool result so far.
  const last = mock.requests[mock.requests.length - 1]!;
  const results = toolResults(last);
  const uses = last.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<Record<string, any>>) : [])).filter((b) => b.type === 'tool_use');
  const use = uses.find((u) => String(u.input?.command ?? '').includes(commandFragment));
  expect(use, `no tool_use for ${commandFragment}`).toBeDefined();
  return results.find((r) => r.tool_use_id === use!.id)!.text;
}

describe('Claude Code 2.1.332 with the Spillway hook installed', () => {
  it('runs both commands and finishes', () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(toolResults(mock.requests[mock.requests.length - 1]!)).toHaveLength(2);
  });

  it('sends the model a digest of the 10 KB output with the error and the tail, and keeps the full text in a blob', async () => {
    const full = bashOutput(CMD_10K);
    expect(full.length).toBeGreaterThan(9_000);
    const seen = resultTextFor('compiling module_');
    expect(seen.length).toBeLessThan(full.length / 2);
    expect(seen).toContain("error TS2322: Type 'string' is not assignable");
    expect(seen.trimEnd().endsWith('BUILD FAILED with 1 error')).toBe(true);
    const spillDir = path.join(sessionFolder(), 'spillway');
    expect(seen).toContain(spillDir);
    const { records } = await readManifest(spillDir);
    const rec = records.find((r) => String((r.args as { command?: string })?.command).includes('compiling module_'))!;
    expect(rec.tool).toBe('Bash');
    expect(fs.readFileSync(path.join(spillDir, rec.file), 'utf8')).toContain(full.trimEnd());
  });

  it('replaces the head-only preview of the 300 KB output with one that keeps the middle failure and the tail, pointing at Claude Code own file', async () => {
    const full = bashOutput(CMD_300K);
    expect(full.length).toBeGreaterThan(250_000);
    const seen = resultTextFor('processed record ok');
    expect(seen).not.toContain('<persisted-output>');
    expect(seen.length).toBeLessThan(8_000);
    expect(seen).toContain('FATAL: checksum mismatch in shard 7');
    expect(seen.trimEnd().endsWith('exit summary: 1 shard failed')).toBe(true);
    const toolResultsDir = path.join(sessionFolder(), 'tool-results');
    const bFile = fs.readdirSync(toolResultsDir).find((f) => /^b[0-9a-z]{6,12}\.txt$/.test(f))!;
    expect(seen).toContain(path.join(toolResultsDir, bFile));
    expect(fs.readFileSync(path.join(toolResultsDir, bFile), 'utf8')).toBe(full);
    const { records } = await readManifest(path.join(sessionFolder(), 'spillway'));
    expect(records.find((r) => r.file === `../tool-results/${bFile}`)?.tool).toBe('Bash');
  });

  it('lists both blobs with their tool names in `spillway list --json`', () => {
    const res = spawnSync(process.execPath, [cli, 'list', '--json', '--no-default-roots', '--root', configDir, '--source', 'claude-code'], {
      encoding: 'utf8',
      env: { ...process.env, HOME: tmp, CLAUDE_CONFIG_DIR: configDir },
    });
    expect(res.status, res.stderr).toBe(0);
    const listed = JSON.parse(res.stdout) as { sessions: Array<{ blobs: Array<{ path: string; tool: string | null; args: unknown }> }> };
    const blobs = listed.sessions.flatMap((s) => s.blobs);
    const spilled = blobs.find((b) => b.path.includes(`${path.sep}spillway${path.sep}`));
    const persisted = blobs.find((b) => /tool-results\/b[0-9a-z]{6,12}\.txt$/.test(b.path));
    expect(spilled?.tool).toBe('Bash');
    expect(persisted?.tool).toBe('Bash');
    expect(String(persisted?.args)).toContain('processed record ok');
  });
});
