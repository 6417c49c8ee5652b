// The real opencode (1.18.33, offline against a local chat-completions mock)
// with Spillway's plugin as `spillway hook install opencode` lists it: failing
// builds of 20 KB, 300 KB and 5 MB reach the model as a digest holding the
// failure line, the exit code and the path of the whole output (read from the
// requests the mock received); small outputs, timeouts and background
// commands reach it exactly as without Spillway; a denied command stays denied
// and leaves nothing behind; `spillway list/grep/clean` show what was written.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failingBuild, FAILURE_KINDS, fullOutputOf, type FailingBuild } from './helpers/failing-build';
import { startMockOpenAI, toolResults, type ChatRequest, type MockOpenAI } from './helpers/mock-openai';
import { makeOpencodeHome, runOpencode, type OpencodeHome } from './helpers/opencode-run';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');

/** A mock that asks for one bash call after another (in one session) and then ends the turn. */
function scripted(calls: Array<{ command: string; timeout?: number }>): (req: ChatRequest) => ReturnType<Parameters<typeof startMockOpenAI>[0]> {
  return (req) => {
    const done = req.messages.filter((m) => m.role === 'tool').length;
    // opencode's title request has no tools: answer it with text.
    if (!Array.isArray(req.tools) || done >= calls.length) return { kind: 'text', text: 'done' };
    const call = calls[done]!;
    return { kind: 'tool_call', name: 'bash', args: { ...call, description: `step ${done + 1}` } };
  };
}

/** The tool results of the session's last request, in the order the calls were made. */
function resultsInOrder(mock: MockOpenAI): string[] {
  const last = mock.requests.filter((r) => Array.isArray(r.tools)).at(-1)!;
  return [...toolResults(last).values()];
}

function spillway(h: OpencodeHome, ...args: string[]) {
  const res = spawnSync(process.execPath, [cli, ...args], { env: { ...process.env, ...h.env }, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

function installPlugin(h: OpencodeHome): void {
  const res = spillway(h, 'hook', 'install', 'opencode', '--user');
  expect(res.stderr).toBe('');
  expect(res.code).toBe(0);
}

/** Commands whose output opencode already hands over whole or as it decides: Spillway must not change a byte. */
const UNCHANGED: Array<{ command: string; timeout?: number }> = [
  { command: 'echo ok' },
  { command: 'seq 1 200; echo warn: deprecated >&2; exit 3' },
  { command: 'echo started; sleep 30', timeout: 1500 },
  { command: '(sleep 3; echo late) & echo in the background' },
];

describe('opencode with Spillway plugin', () => {
  let withPlugin: OpencodeHome;
  let builds: FailingBuild[];
  let results: string[];
  let plain: string[];
  let sessionDir: string;

  beforeAll(async () => {
    if (!fs.existsSync(path.join(repo, 'dist', 'opencode-plugin.js')) || !fs.existsSync(cli)) throw new Error('build first: node esbuild.mjs');
    let seed = 56;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const sizes = [20_000, 300_000, 5_000_000, 300_000];
    builds = sizes.map((bytes, i) => failingBuild(bytes, 1 + (i % 3), random, (i * 2 + Math.floor(random() * 2)) % FAILURE_KINDS.length, i === 3));

    withPlugin = await makeOpencodeHome();
    fs.writeFileSync(path.join(withPlugin.project, 'keep.txt'), 'precious\n');
    const mock = await startMockOpenAI(scripted([...builds.map((b) => ({ command: b.command })), ...UNCHANGED]));
    withPlugin.writeConfig(mock.baseURL, { permission: { bash: { '*': 'allow' } } });
    installPlugin(withPlugin);
    const run = await runOpencode(withPlugin, 'build it');
    await mock.close();
    expect(run.code, run.stderr).toBe(0);
    results = resultsInOrder(mock);

    const without = await makeOpencodeHome();
    const plainMock = await startMockOpenAI(scripted(UNCHANGED));
    without.writeConfig(plainMock.baseURL, { permission: { bash: { '*': 'allow' } } });
    const plainRun = await runOpencode(without, 'build it');
    await plainMock.close();
    expect(plainRun.code, plainRun.stderr).toBe(0);
    plain = resultsInOrder(plainMock);
    const sessions = fs.readdirSync(path.join(withPlugin.dataDir, 'opencode', 'spillway')).filter((n) => n.startsWith('ses_'));
    expect(sessions).toHaveLength(1);
    sessionDir = path.join(withPlugin.dataDir, 'opencode', 'spillway', sessions[0]!);
  }, 900_000);

  afterAll(() => {
    if (withPlugin) fs.rmSync(withPlugin.root, { recursive: true, force: true });
  });

  it('hands the model the failure line, the exit code and the path of the whole output of every failing build', () => {
    expect(results).toHaveLength(builds.length + UNCHANGED.length);
    builds.forEach((build, i) => {
      const text = results[i]!;
      expect(text, `build ${i} (${build.bytes} bytes)`).toContain(build.failureLine);
      expect(text).toContain(`[line ${build.failureAt}]`);
      if (build.locationLine) expect(text).toContain(build.locationLine.trim());
      const trailer = new RegExp(`exited with code ${build.exitCode}; its complete output \\(stdout and stderr\\) is in (\\S+)\\]`).exec(text);
      expect(trailer, text.slice(-400)).not.toBeNull();
      const file = trailer![1]!;
      expect(path.dirname(file)).toBe(sessionDir);
      // The whole output, to the last byte, even when opencode's own copy lost its end.
      expect(fs.readFileSync(file, 'utf8')).toBe(fullOutputOf(build, withPlugin.project));
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(Buffer.byteLength(text)).toBeLessThan(4096);
    });
    expect(fs.statSync(sessionDir).mode & 0o777).toBe(0o700);
  });

  it('leaves small outputs, timeouts and background commands exactly as opencode shows them without Spillway', () => {
    expect(plain).toHaveLength(UNCHANGED.length);
    expect(results.slice(builds.length)).toEqual(plain);
    expect(plain[0]).toBe('ok\n');
    // Nothing kept of them: only the builds' captures, the manifest and the record of the session's API calls.
    expect(fs.readdirSync(sessionDir).sort()).toEqual([...builds.map((_, i) => path.basename(/is in (\S+)\]/.exec(results[i]!)![1]!)), '.spillway-calls.jsonl', 'spillway.jsonl'].sort());
  });

  it('shows what it wrote in spillway list, grep and clean, by session and tool call', () => {
    const listed = JSON.parse(spillway(withPlugin, 'list', '--json').stdout) as { sessions: Array<{ source: string; id: string; blobs: Array<{ path: string; toolCallId?: string; tool?: string }> }> };
    const session = listed.sessions.find((s) => s.id === path.basename(sessionDir));
    expect(session?.source).toBe('opencode');
    expect(session!.blobs.map((b) => b.toolCallId).sort()).toEqual(builds.map((_, i) => path.basename(/is in (\S+)\]/.exec(results[i]!)![1]!, '.log')).sort());
    expect(new Set(session!.blobs.map((b) => b.tool))).toEqual(new Set(['bash']));
    const grep = spillway(withPlugin, 'grep', builds[1]!.failureLine);
    expect(grep.code).toBe(0);
    expect(grep.stdout).toContain(builds[1]!.failureLine);
    const clean = spillway(withPlugin, 'clean', '--session', path.basename(sessionDir), '--yes');
    expect(clean.code, clean.stderr).toBe(0);
    expect(fs.readdirSync(sessionDir).filter((n) => n.endsWith('.log'))).toEqual([]);
  });
});

describe('opencode permission rules with Spillway plugin', () => {
  it('keeps a denied command denied, runs nothing and writes nothing', async () => {
    const h = await makeOpencodeHome();
    try {
      const victim = path.join(h.project, 'victim');
      fs.mkdirSync(victim);
      fs.writeFileSync(path.join(victim, 'data.txt'), 'keep me\n');
      const mock = await startMockOpenAI(scripted([{ command: `rm -rf ${victim}` }, { command: 'echo after' }]));
      h.writeConfig(mock.baseURL, { permission: { bash: { '*': 'allow', 'rm *': 'deny' } } });
      installPlugin(h);
      const run = await runOpencode(h, 'clean up');
      await mock.close();
      expect(run.code, run.stderr).toBe(0);
      expect(fs.readFileSync(path.join(victim, 'data.txt'), 'utf8')).toBe('keep me\n');
      const toolEvents = run.events.filter((e) => e.type === 'tool_use').map((e) => (e.part as { state: { status: string; input: { command: string } } }).state);
      expect(toolEvents.find((s) => s.input.command.startsWith('rm '))?.status).toBe('error');
      const root = path.join(h.dataDir, 'opencode', 'spillway');
      const files = fs.existsSync(root) ? fs.readdirSync(root, { recursive: true }).map(String).filter((n) => n.endsWith('.log')) : [];
      expect(files).toEqual([]);
    } finally {
      fs.rmSync(h.root, { recursive: true, force: true });
    }
  }, 600_000);
});
