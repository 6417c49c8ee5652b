// The AfterTool hook on the REAL Gemini CLI 0.61.0 (installed by `node
// scripts/setup.mjs gemini-cli`), offline against the mock Gemini API, the hook
// installed by `spillway hook install gemini-cli`: failing builds of 20 KB,
// 300 KB and 5 MB (exit 1 and 2, failure lines of every kind at a random place
// among decoys) must reach the model with the failure line, the exit code and
// the path of a file holding the complete output; `echo ok` must reach it as
// it does without Spillway; a command the user's policy denies stays denied
// and leaves nothing behind; the catalog lists and greps what the hook wrote.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failingBuild, fullOutputOf, type FailingBuild } from './helpers/failing-build';
import { firstSeenResult, functionResponses, geminiDirs, offlineGeminiEnv, runGemini, shellScript, startMockGemini, type MockGemini } from './helpers/mock-gemini';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');
const geminiScript = path.join(repoRoot, '.cache', 'gemini-cli', 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');

// Each kind of failure line, sizes 20 KB to 5 MB, exit codes 1 and 2.
const BUILDS: FailingBuild[] = [
  failingBuild(20_000, 1, Math.random, 0),
  failingBuild(20_000, 2, Math.random, 1),
  failingBuild(300_000, 1, Math.random, 2),
  failingBuild(300_000, 2, Math.random, 3),
  failingBuild(5_000_000, 1, Math.random, 4),
  failingBuild(5_000_000, 2, Math.random, 5),
  failingBuild(300_000, 1, Math.random, 0, true),
];
const ECHO = 'echo ok';
/** Denied by the user's policy; had it run, it would have deleted the folder and printed 1 MB. */
const DENIED = 'rm -rf victim; seq 1 150000';
const POLICY = `[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "rm"\ndecision = "deny"\npriority = 900\n`;

interface Run {
  tmp: string;
  home: string;
  workDir: string;
  mock: MockGemini;
  result: { code: number | null; stdout: string; stderr: string };
}

async function geminiRun(prefix: string, commands: string[], withSpillway: boolean): Promise<Run> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const { home, workDir } = geminiDirs(tmp);
  fs.mkdirSync(path.join(workDir, 'victim'));
  fs.mkdirSync(path.join(home, '.gemini', 'policies'));
  fs.writeFileSync(path.join(home, '.gemini', 'policies', 'deny-rm.toml'), POLICY);
  if (withSpillway) {
    const install = spawnSync(process.execPath, [cli, 'hook', 'install', 'gemini-cli', '--user'], { encoding: 'utf8', env: { ...process.env, HOME: home } });
    expect(install.status, install.stderr).toBe(0);
    expect(install.stdout).toContain('added AfterTool hook');
  }
  const mock = await startMockGemini(shellScript(commands, 'done'));
  const result = await runGemini({ script: geminiScript, prompt: 'Build it', cwd: workDir, env: offlineGeminiEnv({ home, baseUrl: mock.url }) });
  return { tmp, home, workDir, mock, result };
}

let withHook: Run;
let without: Run;

beforeAll(async () => {
  if (!fs.existsSync(cli)) throw new Error('run `npm run build` first: dist/cli.js is missing');
  if (!fs.existsSync(geminiScript)) throw new Error(`Gemini CLI is missing: ${geminiScript} (node scripts/setup.mjs gemini-cli)`);
  [withHook, without] = await Promise.all([
    geminiRun('spillway-gemini-e2e-', [...BUILDS.map((b) => b.command), ECHO, DENIED], true),
    geminiRun('spillway-gemini-plain-', [ECHO, DENIED], false),
  ]);
}, 600_000);

afterAll(async () => {
  for (const run of [withHook, without]) {
    await run?.mock.close();
    if (run && !process.env.KEEP_E2E) fs.rmSync(run.tmp, { recursive: true, force: true });
  }
});

/** The result of each call, in order, as the model was first sent it. */
function results(run: Run): string[] {
  const count = functionResponses(run.mock.requests[run.mock.requests.length - 1]!).length;
  return Array.from({ length: count }, (_, i) => firstSeenResult(run.mock.requests, i)!);
}

/** Process group ids differ from run to run. */
const samePgid = (text: string) => text.replace(/Process Group PGID: \d+/g, 'Process Group PGID: N');

/** Paths of the blobs the hook wrote, from the manifests in Gemini's tool-outputs folders. */
function manifestRecords(home: string): Array<{ file: string; dir: string; tool: string; toolCallId: string; args: { command?: string } }> {
  const base = path.join(home, '.gemini', 'tmp');
  const out: Array<{ file: string; dir: string; tool: string; toolCallId: string; args: { command?: string } }> = [];
  for (const project of fs.readdirSync(base)) {
    const outputs = path.join(base, project, 'tool-outputs');
    if (!fs.existsSync(outputs)) continue;
    for (const session of fs.readdirSync(outputs)) {
      const manifest = path.join(outputs, session, 'spillway.jsonl');
      if (!fs.existsSync(manifest)) continue;
      for (const line of fs.readFileSync(manifest, 'utf8').split('\n').filter(Boolean)) out.push({ ...JSON.parse(line), dir: path.join(outputs, session) });
    }
  }
  return out;
}

describe('Gemini CLI 0.61.0 with the AfterTool hook', () => {
  it('runs every command and finishes', () => {
    expect(withHook.result.code, withHook.result.stderr.slice(-2000)).toBe(0);
    expect(results(withHook)).toHaveLength(BUILDS.length + 2);
  });

  it.each(BUILDS.map((b, i) => [`${b.bytes} bytes, exit ${b.exitCode}, failure at line ${b.failureAt}`, i] as const))(
    'a failing build of %s reaches the model with its failure line, exit code and the whole output on disk',
    (_name, i) => {
      const build = BUILDS[i]!;
      const seen = results(withHook)[i]!;
      expect(seen).toContain(build.failureLine);
      if (build.locationLine) expect(seen).toContain(build.locationLine);
      expect(seen).toContain(`Exit Code: ${build.exitCode}`);
      expect(seen).toContain(`exited with code ${build.exitCode}`);
      expect(seen).toContain('build finished: 1 unit failed');
      expect(seen.length).toBeLessThan(4_000);
      const file = /its complete output \(stdout and stderr\) is in (\S+)\]/.exec(seen)?.[1];
      expect(file, seen).toBeDefined();
      const whole = fullOutputOf(build, withHook.workDir);
      // Gemini drops the output's final newline.
      expect(fs.readFileSync(file!, 'utf8')).toBe(whole.replace(/\n$/, ''));
      expect(fs.statSync(file!).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file!)).mode & 0o777).toBe(0o700);
      // The line number the digest gives is the failure line's line in that file.
      expect(seen).toContain(`[line ${build.failureAt}] ${build.failureLine}`);
    },
  );

  it('hands `echo ok` to the model exactly as Gemini does without Spillway', () => {
    const seen = results(withHook)[BUILDS.length]!;
    expect(seen).toContain('Output: ok');
    expect(samePgid(seen)).toBe(samePgid(results(without)[0]!));
  });

  it('keeps a command the policy denies denied: it never runs, the model gets the same refusal, nothing is written', () => {
    expect(fs.existsSync(path.join(withHook.workDir, 'victim'))).toBe(true);
    const seen = results(withHook)[BUILDS.length + 1]!;
    expect(seen).toBe(results(without)[1]!);
    expect(seen).not.toContain('150000');
    const records = manifestRecords(withHook.home);
    expect(records.map((r) => r.args.command)).toEqual(BUILDS.map((b) => b.command));
    // One blob per build, and no digest file or blob for the denied command.
    const files = fs.readdirSync(records[0]!.dir).filter((f) => f.includes('spillway') || records.some((r) => r.file === f));
    expect(files.filter((f) => !f.startsWith('.spillway-digest-') && f !== 'spillway.jsonl')).toHaveLength(BUILDS.length);
  });

  it('lists and greps what the hook wrote, attributed to Gemini CLI, the session and the shell call', () => {
    const root = path.join(withHook.home, '.gemini', 'tmp');
    const listed = spawnSync(process.execPath, [cli, 'list', '--json', '--no-default-roots', '--root', root, '--source', 'gemini-cli'], { encoding: 'utf8', env: { ...process.env, HOME: withHook.home } });
    expect(listed.status, listed.stderr).toBe(0);
    type Blob = { path: string; tool: string | null; toolCallId: string | null; args: string | null };
    const catalog = JSON.parse(listed.stdout) as { sessions: Array<{ source: string; id: string; blobs: Blob[] }> };
    const sessionId = JSON.parse(withHook.result.stdout.split('\n')[0]!).session_id as string;
    const session = catalog.sessions.find((s) => s.id === sessionId);
    expect(session, listed.stdout.slice(0, 2000)).toBeDefined();
    expect(session!.source).toBe('gemini-cli');
    const blobs = catalog.sessions.flatMap((s) => s.blobs);
    // Gemini's own ids for the shell calls, from its stream-json events.
    const events = withHook.result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; tool_id?: string; parameters?: { command?: string } });
    const callIdOf = (command: string) => events.find((e) => e.type === 'tool_use' && e.parameters?.command === command)?.tool_id;
    for (const record of manifestRecords(withHook.home)) {
      const blob = session!.blobs.find((b) => b.path === path.join(record.dir, record.file));
      expect(blob, record.file).toBeDefined();
      expect(blob!.tool).toBe('run_shell_command');
      expect(blob!.toolCallId).toBe(callIdOf(record.args.command!));
      expect(blob!.toolCallId).toBeDefined();
      expect(blob!.args).toContain('awk');
    }
    // The digest files are Spillway's own: never listed.
    expect(blobs.some((b) => path.basename(b.path).startsWith('.spillway'))).toBe(false);
    const grep = spawnSync(process.execPath, [cli, 'grep', '--json', '--no-default-roots', '--root', root, BUILDS[2]!.failureLine], { encoding: 'utf8', env: { ...process.env, HOME: withHook.home } });
    expect(grep.status, grep.stderr).toBe(0);
    expect(grep.stdout).toContain(BUILDS[2]!.failureLine);
  });

  it('charts the session turn by turn, each blob at the call that ran its command', () => {
    const root = path.join(withHook.home, '.gemini', 'tmp');
    const sessionId = JSON.parse(withHook.result.stdout.split('\n')[0]!).session_id as string;
    const turns = spawnSync(process.execPath, [cli, 'turns', sessionId, '--json', '--no-default-roots', '--root', root], { encoding: 'utf8', env: { ...process.env, HOME: withHook.home } });
    expect(turns.status, turns.stderr).toBe(0);
    const series = JSON.parse(turns.stdout) as { points: Array<{ index: number; promptTokens: number; blobs: string[] }> };
    // One call per command plus the last answer, each prompt at least as large as the one before.
    expect(series.points).toHaveLength(BUILDS.length + 3);
    for (let i = 1; i < series.points.length; i++) expect(series.points[i]!.promptTokens).toBeGreaterThanOrEqual(series.points[i - 1]!.promptTokens);
    // The calls that ran the builds each hold one blob (Spillway's), and the 300 KB and 5 MB ones also Gemini's own file.
    for (let i = 0; i < BUILDS.length; i++) expect(series.points[i]!.blobs.length, `turn ${i + 1}`).toBe(BUILDS[i]!.bytes > 40_000 ? 2 : 1);
  });

  it('cleans what the hook wrote with the session', () => {
    const root = path.join(withHook.home, '.gemini', 'tmp');
    const sessionId = JSON.parse(withHook.result.stdout.split('\n')[0]!).session_id as string;
    const clean = spawnSync(process.execPath, [cli, 'clean', '--session', sessionId, '--yes', '--no-default-roots', '--root', root], { encoding: 'utf8', env: { ...process.env, HOME: withHook.home } });
    expect(clean.status, clean.stderr).toBe(0);
    for (const record of manifestRecords(withHook.home)) expect(fs.existsSync(path.join(record.dir, record.file))).toBe(false);
    // Gemini's session file stays.
    expect(fs.readdirSync(path.join(root, fs.readdirSync(root)[0]!, 'chats')).length).toBeGreaterThan(0);
  });
});
