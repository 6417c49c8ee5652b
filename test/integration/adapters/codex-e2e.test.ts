// The Codex hook on the REAL Codex CLI 0.169.0, offline against the mock
// Responses API, installed by `spillway hook install codex --trust`: failing
// builds of 20 KB, 300 KB and 5 MB (each kind of failure line, exit 1 and 2,
// the failure line at a random place among decoys) reach the model with the
// failure line, the exit code and the path of a file holding the complete
// output; a command still running when Codex hands back its first output
// brings its digest when it ends; `echo ok` reaches it as without Spillway;
// commands the user's rules forbid or would ask about, and a forced `rm`,
// stay refused, with Codex's own words; a rules file Spillway does not
// understand leaves every command as typed; the catalog lists, greps, charts
// and cleans what the hook wrote.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, codexBin, execScript, outputFor, runCodex, type CodexRun, type ScriptedCommand } from './helpers/codex';
import { failingBuild, fullOutputOf, type FailingBuild } from './helpers/failing-build';
import { startMockResponses, type MockResponses } from './helpers/mock-responses';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');

const BUILDS: FailingBuild[] = [
  failingBuild(20_000, 1, Math.random, 0),
  failingBuild(20_000, 2, Math.random, 1),
  failingBuild(300_000, 1, Math.random, 2),
  failingBuild(300_000, 2, Math.random, 3, true),
  failingBuild(5_000_000, 1, Math.random, 4),
  failingBuild(5_000_000, 2, Math.random, 5),
];
/** Still running when Codex hands back its first output (after 300 ms): the rest comes through write_stdin. */
const SLOW = failingBuild(300_000, 2, Math.random, 0);
const SLOW_COMMAND = `sleep 2; ${SLOW.command}`;
const ECHO = 'echo ok';
const RULES = `# the user's own rules
prefix_rule(pattern = ["touch"], decision = "forbidden", justification = "nothing is touched here")
prefix_rule(
    pattern=["mkdir", ["-p", "--parents"]],
    decision="prompt",
)
prefix_rule(pattern=["git", "status"], decision="allow")
`;
// Codex judges the quoted `"touch"` itself (it lets it run): Spillway must leave it to Codex all the same.
const REFUSED = ['touch forbidden-1', 'echo a && "touch" forbidden-2', 'mkdir -p prompted-dir', 'rm -f victim', 'echo x; $(echo touch) forbidden-3'];
/** The file each of REFUSED would make or delete. */
const FILES = ['forbidden-1', 'forbidden-2', 'prompted-dir', 'victim', 'forbidden-3'];

let tmp: string;
const runs: Record<'spillway' | 'alone' | 'unreadable', { home: string; work: string; mock: MockResponses; run: CodexRun }> = {} as never;

function homeWithRules(name: string, rules: string): { home: string; work: string } {
  const home = path.join(tmp, name, 'codex-home');
  const work = path.join(tmp, name, 'work');
  fs.mkdirSync(path.join(home, 'rules'), { recursive: true });
  fs.mkdirSync(work, { recursive: true });
  fs.writeFileSync(path.join(home, 'rules', 'user.rules'), rules);
  fs.writeFileSync(path.join(work, 'victim'), 'still here\n');
  return { home, work };
}

function spillway(args: string[], home: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, CODEX_HOME: home, HOME: path.join(tmp, 'no-home') } });
}

async function start(name: keyof typeof runs, rules: string, commands: ScriptedCommand[], install: boolean): Promise<void> {
  const { home, work } = homeWithRules(name, rules);
  if (install) {
    const res = spillway(['hook', 'install', 'codex', '--user', '--trust'], home);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain('added PreToolUse hook (matcher "Bash")');
    expect(res.stdout).toContain('added Stop hook (no matcher)');
    expect(res.stdout).toContain(`recorded trust for the hook in ${path.join(home, 'config.toml')}: [hooks.state."${path.join(home, 'hooks.json')}:stop:0:0"]`);
  }
  const mock = await startMockResponses(execScript(commands));
  const run = await runCodex({ codexHome: home, cwd: work, baseUrl: mock.url });
  runs[name] = { home, work, mock, run };
}

const lastRequest = (name: keyof typeof runs) => runs[name].mock.requests[runs[name].mock.requests.length - 1]!;

beforeAll(async () => {
  if (!fs.existsSync(cli) || !fs.existsSync(path.join(repoRoot, 'dist', 'codex-hook.js'))) throw new Error('run `npm run build` first: dist/ is missing');
  if (!fs.existsSync(codexBin())) throw new Error(`Codex is missing: ${codexBin()} (node scripts/setup.mjs codex installs it)`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-codex-e2e-'));
  const all: ScriptedCommand[] = [ECHO, ...BUILDS.map((b) => b.command), { cmd: SLOW_COMMAND, yieldMs: 300 }, ...REFUSED];
  await Promise.all([
    start('spillway', RULES, all, true),
    start('alone', RULES, [ECHO, BUILDS[2]!.command, ...REFUSED], false),
    // A rules file outside the subset Spillway reads (a variable): nothing may be rewritten.
    start('unreadable', `RM = "rm"\nprefix_rule(pattern = [RM, "-r"], decision = "forbidden")\n`, [BUILDS[2]!.command], true),
  ]);
  for (const r of Object.values(runs)) expect(r.run.code, r.run.stderr.slice(-2000)).toBe(0);
}, 480_000);

afterAll(async () => {
  await Promise.all(Object.values(runs).map((r) => r.mock.close()));
  if (tmp && !process.env.KEEP_E2E) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('real Codex with the Spillway hook', () => {
  it.each([...BUILDS.map((b, i) => [`${b.bytes} bytes, exit ${b.exitCode}, kind ${i}`, b, b.command] as const), ['still running after the first output', SLOW, SLOW_COMMAND] as const])(
    'a failing build (%s) reaches the model with its failure line, exit code and whole output',
    (_name, build, command) => {
      const seen = outputFor(lastRequest('spillway'), command);
      expect(seen).toContain(`Process exited with code ${build.exitCode}`);
      expect(seen, seen.slice(0, 3000)).toContain(build.failureLine);
      if (build.locationLine) expect(seen).toContain(build.locationLine);
      expect(seen).toContain(`[spillway: the command exited with code ${build.exitCode}; its complete output (stdout and stderr) is in `);
      expect(seen).toContain('build finished: 1 unit failed');
      const file = /complete output \(stdout and stderr\) is in (\S+)\]/.exec(seen)![1]!;
      expect(fs.readFileSync(file, 'utf8')).toBe(fullOutputOf(build, runs.spillway.work));
      expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
      expect((fs.statSync(path.dirname(file)).mode & 0o777).toString(8)).toBe('700');
      expect(seen.length).toBeLessThan(6_000);
    },
  );

  it('echo ok reaches the model as it does without Spillway, and leaves no file', () => {
    const withSpillway = bodyOf(outputFor(lastRequest('spillway'), ECHO));
    expect(withSpillway).toBe(bodyOf(outputFor(lastRequest('alone'), ECHO)));
    expect(withSpillway).toBe('ok\n');
    const sessions = fs.readdirSync(path.join(runs.spillway.home, 'spillway'));
    const files = sessions.flatMap((s) => fs.readdirSync(path.join(runs.spillway.home, 'spillway', s)));
    // One file per large output, the manifest; nothing for echo ok or the refused commands.
    expect(files.filter((f) => f.startsWith('bash-')).length).toBe(BUILDS.length + 1);
  });

  /** What Codex says of a call, without what differs between two runs (chunk ids, times). */
  const steady = (text: string) => text.replace(/Chunk ID: \w+|Wall time: [\d.]+ seconds/g, '');

  it.each(REFUSED.map((command, i) => [command, FILES[i]!] as const))('%s is judged as without Spillway: the same answer, the same effect', (command, file) => {
    expect(steady(outputFor(lastRequest('spillway'), command))).toBe(steady(outputFor(lastRequest('alone'), command)));
    expect(fs.existsSync(path.join(runs.spillway.work, file))).toBe(fs.existsSync(path.join(runs.alone.work, file)));
    expect(fs.readFileSync(path.join(runs.spillway.work, 'victim'), 'utf8')).toBe('still here\n');
  });

  it('a forbidden command, a prompted one and a forced rm do not run', () => {
    for (const command of ['touch forbidden-1', 'mkdir -p prompted-dir', 'rm -f victim']) {
      expect(outputFor(lastRequest('spillway'), command)).toMatch(/rejected|forbidden|not permitted|approval/i);
    }
    expect(fs.existsSync(path.join(runs.spillway.work, 'forbidden-1'))).toBe(false);
    expect(fs.existsSync(path.join(runs.spillway.work, 'prompted-dir'))).toBe(false);
  });

  it('a rules file Spillway does not understand leaves the command as typed (Codex cuts it, no file)', () => {
    const build = BUILDS[2]!;
    const seen = outputFor(lastRequest('unreadable'), build.command);
    expect(seen).toContain(`Process exited with code ${build.exitCode}`);
    expect(seen).not.toContain('[spillway:');
    // Codex's own cut, the same as without Spillway.
    expect(bodyOf(seen)).toBe(bodyOf(outputFor(lastRequest('alone'), build.command)));
    expect(seen).not.toContain(build.failureLine);
    expect(fs.existsSync(path.join(runs.unreadable.home, 'spillway'))).toBe(false);
  });

  it('spillway list, grep, turns and clean show what the hook wrote, by session and call', () => {
    const home = runs.spillway.home;
    const listed = spillway(['list', '--json'], home);
    expect(listed.status, listed.stderr).toBe(0);
    const catalog = JSON.parse(listed.stdout) as { sessions: Array<{ source: string; id: string; transcript?: string; blobs: Array<{ path: string; tool?: string; toolCallId?: string; turn?: number; kind: string }> }> };
    const sessions = catalog.sessions.filter((s) => s.source === 'codex');
    expect(sessions).toHaveLength(1);
    const session = sessions[0]!;
    const threadId = /"thread_id":"([^"]+)"/.exec(runs.spillway.run.stdout)![1];
    expect(session.id).toBe(threadId);
    // Read from Codex's rollout file.
    expect((session as { cwd?: string }).cwd).toBe(runs.spillway.work);
    expect(session.blobs).toHaveLength(BUILDS.length + 1);
    for (const blob of session.blobs) {
      expect(blob).toMatchObject({ tool: 'Bash', kind: 'shell-output' });
      expect(blob.toolCallId).toMatch(/^call_mock\d+$/);
      expect(blob.turn).toBeGreaterThan(0);
      expect(path.basename(blob.path)).toBe(`bash-${blob.toolCallId}.txt`);
    }
    const grep = spillway(['grep', BUILDS[4]!.failureLine], home);
    expect(grep.status, grep.stderr).toBe(0);
    expect(grep.stdout).toContain(`:${BUILDS[4]!.failureAt}:${BUILDS[4]!.failureLine}`);
    const turns = spillway(['turns', session.id, '--json'], home);
    expect(turns.status, turns.stderr).toBe(0);
    const points = (JSON.parse(turns.stdout) as { points: Array<{ parts: Array<{ spilled?: boolean; path?: string }> }> }).points;
    // One point per API call: one per command (and poll), and the last answer.
    expect(points.length).toBeGreaterThan(BUILDS.length + REFUSED.length);
    expect(points.flatMap((p) => p.parts).filter((part) => part.spilled).length).toBe(BUILDS.length + 1);
    const clean = spillway(['clean', '--session', session.id, '--yes'], home);
    expect(clean.status, clean.stderr).toBe(0);
    for (const blob of session.blobs) expect(fs.existsSync(blob.path)).toBe(false);
  });
});
