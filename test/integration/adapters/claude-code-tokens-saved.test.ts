// The catalog's tokens-saved figure against the difference measured on the
// REAL Claude Code CLI, offline against the mock Messages API: the same Bash
// commands run with Spillway's hooks installed and without; the tool results
// every request carried are summed, and `spillway turns --json` on the run
// with the hooks must come within 10% of the difference.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashScript, CLAUDE_BIN_RELATIVE, claudeDirs, offlineClaudeEnv, runClaude, startMockAnthropic, toolResults, type MessagesRequest } from './helpers/mock-anthropic';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');
const claudeBin = path.join(repoRoot, ...CLAUDE_BIN_RELATIVE);
const tmpDirs: string[] = [];

/** Outputs Claude Code shows whole (10-25 KB), one it persists itself (over 30,000 chars), all with failure lines. */
const COMMANDS = [
  'for i in $(seq 1 500); do echo "step $i: compiling module_$i ok"; done; echo "error TS2322 in src/m280.ts"',
  'seq 1 1500 | sed "s/$/ record processed and checksummed ok/"',
  'seq 1 900 | sed "s/^/test case /; s/$/ passed in 3ms/"; echo "FAIL: 1 of 900"',
  'seq 1 9000 | sed "s/$/ processed record ok/"; echo "FATAL: checksum mismatch in shard 7"',
];

/** A run of the commands; with `hooks`, Spillway's installed first. Returns the requests that carried tools, and the dirs. */
async function runWith(hooks: boolean): Promise<{ requests: MessagesRequest[]; configDir: string; tmp: string }> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `spillway-cc-tokens-${hooks ? 'on' : 'off'}-`));
  tmpDirs.push(tmp);
  const { configDir, workDir } = claudeDirs(tmp);
  if (hooks) {
    const install = spawnSync(process.execPath, [cli, 'hook', 'install', 'claude-code', '--user'], { encoding: 'utf8', env: { ...process.env, CLAUDE_CONFIG_DIR: configDir } });
    expect(install.status, install.stderr).toBe(0);
  }
  const mock = await startMockAnthropic(bashScript(COMMANDS, 'done'));
  try {
    const env = { ...offlineClaudeEnv({ home: tmp, configDir, baseUrl: mock.url }), SPILLWAY_CAPTURE_BASH: 'never' };
    const run = await runClaude({ bin: claudeBin, prompt: 'Build and process the records', cwd: workDir, env });
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    return { requests: mock.requests.filter((r) => (r.tools ?? []).some((t) => t.name === 'Bash')), configDir, tmp };
  } finally {
    await mock.close();
  }
}

const sentChars = (requests: MessagesRequest[]): number => requests.flatMap(toolResults).reduce((n, r) => n + r.text.length, 0);

beforeAll(() => {
  if (!fs.existsSync(cli)) throw new Error('run `npm run build` first: dist/cli.js is missing');
  if (!fs.existsSync(claudeBin)) throw new Error(`the Claude Code binary is missing: ${claudeBin} (npm ci installs it)`);
});
afterAll(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('tokens saved on real Claude Code', () => {
  it('is within 10% of the difference in what the model was sent with and without the hooks', async () => {
    const on = await runWith(true);
    const off = await runWith(false);
    expect(on.requests).toHaveLength(COMMANDS.length + 1);
    expect(off.requests).toHaveLength(COMMANDS.length + 1);
    const measured = Math.round((sentChars(off.requests) - sentChars(on.requests)) / 4);
    expect(measured).toBeGreaterThan(5_000);

    const projects = path.join(on.configDir, 'projects');
    const transcript = fs.readdirSync(projects).flatMap((p) => fs.readdirSync(path.join(projects, p)).filter((f) => f.endsWith('.jsonl')));
    expect(transcript).toHaveLength(1);
    const res = spawnSync(process.execPath, [cli, 'turns', transcript[0]!.replace(/\.jsonl$/, ''), '--json'], {
      encoding: 'utf8',
      env: { ...process.env, HOME: on.tmp, CLAUDE_CONFIG_DIR: on.configDir },
    });
    expect(res.status, res.stderr).toBe(0);
    const figure = (JSON.parse(res.stdout) as { tokensSaved: { tokens: number } }).tokensSaved.tokens;
    if (process.env.SPILLWAY_PRINT_FIGURES) console.log(`Claude Code tokens saved: catalog ${figure}, measured ${measured}`);
    expect(Math.abs(figure - measured) / measured, `catalog ${figure} vs measured ${measured}`).toBeLessThanOrEqual(0.1);
  }, 300_000);
});
