// The Codex hook on the REAL Codex CLI 0.169.0 under its sandboxes, offline
// against the mock Responses API, installed by `spillway hook install codex
// --trust`. `-s workspace-write` keeps $CODEX_HOME read-only for the command,
// so the wrapper captures into a private folder under $TMPDIR and the hooks
// (outside the sandbox) move it to `$CODEX_HOME/spillway/<session>/`: failing
// builds of 20 KB, 300 KB and 5 MB (exit 2, the failure line at a random place
// in the middle) reach the model with the failure line, the exit code and the
// final path, where the whole output is; `echo ok` and a forbidden command
// reach it as without Spillway. `-s danger-full-access` takes the same path.
// `-s read-only` lets nothing be written: the output goes through the digest
// on a pipe, so the same builds reach the model with the failure line, its line
// number and the exit code, saying the whole output could not be kept; `echo
// ok` and a forbidden command as without Spillway; nothing is written.
// CODEX_HOME is outside /tmp: under /tmp Codex refuses to set up its sandbox.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyOf, codexBin, execScript, outputFor, runCodex, type CodexRun, type ScriptedCommand } from './helpers/codex';
import { failingBuild, fullOutputOf, type FailingBuild } from './helpers/failing-build';
import { callOutputs, startMockResponses, type MockResponses, type ResponsesReply, type ResponsesRequest } from './helpers/mock-responses';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');

const BUILDS: FailingBuild[] = [failingBuild(20_000, 2, Math.random, 0), failingBuild(300_000, 2, Math.random, 2, true), failingBuild(5_000_000, 2, Math.random, 4)];
const ECHO = 'echo ok';
/** Still running when Codex hands back its first answer (after 300 ms): the digest comes with a later `write_stdin`. */
const SLOW = failingBuild(300_000, 2, Math.random, 1);
const SLOW_COMMAND = `sleep 2; ${SLOW.command}`;
const FORBIDDEN = 'touch forbidden-1';
const RULES = 'prefix_rule(pattern = ["touch"], decision = "forbidden", justification = "nothing is touched here")\n';

type RunName = 'writeSpillway' | 'writeAlone' | 'readOnlySpillway' | 'readOnlyAlone' | 'fullAccessSpillway';
interface Run {
  home: string;
  work: string;
  tmpdir: string;
  mock: MockResponses;
  run: CodexRun;
  /** Each final path a digest named, and whether the file was there when the model's next request came. */
  onDiskAtNextRequest: Map<string, boolean>;
}

let base: string;
const runs: Record<RunName, Run> = {} as never;

function spillway(args: string[], home: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, CODEX_HOME: home, HOME: path.join(base, 'no-home') } });
}

async function start(name: RunName, sandbox: 'workspace-write' | 'read-only' | 'danger-full-access', commands: ScriptedCommand[], install: boolean): Promise<void> {
  const home = path.join(base, name, 'codex-home');
  const work = path.join(base, name, 'work');
  fs.mkdirSync(path.join(home, 'rules'), { recursive: true });
  fs.mkdirSync(work, { recursive: true });
  fs.writeFileSync(path.join(home, 'rules', 'user.rules'), RULES);
  // A $TMPDIR of the run's own, under /tmp: the sandbox lets the command write it, and what is left in it is seen.
  const tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), `spillway-codex-sandbox-${name}-`));
  if (install) {
    const res = spillway(['hook', 'install', 'codex', '--user', '--trust'], home);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain('added PreToolUse hook (matcher "Bash")');
    expect(res.stdout).toContain('added PostToolUse hook (matcher "Bash")');
    expect(res.stdout).toContain('added Stop hook (no matcher)');
  }
  const onDiskAtNextRequest = new Map<string, boolean>();
  const script = execScript(commands);
  const watching = (req: ResponsesRequest): ResponsesReply => {
    for (const o of callOutputs(req)) {
      const file = /complete output \(stdout and stderr\) is in (\S+)\]/.exec(o.text)?.[1];
      if (file && !onDiskAtNextRequest.has(file)) onDiskAtNextRequest.set(file, fs.existsSync(file));
    }
    return script(req);
  };
  const mock = await startMockResponses(watching);
  const run = await runCodex({ codexHome: home, cwd: work, baseUrl: mock.url, extraArgs: ['-s', sandbox], env: { TMPDIR: tmpdir } });
  runs[name] = { home, work, tmpdir, mock, run, onDiskAtNextRequest };
}

const lastRequest = (name: RunName) => runs[name].mock.requests[runs[name].mock.requests.length - 1]!;

beforeAll(async () => {
  if (!fs.existsSync(cli) || !fs.existsSync(path.join(repoRoot, 'dist', 'codex-hook.js'))) throw new Error('run `npm run build` first: dist/ is missing');
  if (!fs.existsSync(codexBin())) throw new Error(`Codex is missing: ${codexBin()} (node scripts/setup.mjs codex installs it)`);
  fs.mkdirSync(path.join(repoRoot, 'test-results'), { recursive: true });
  base = fs.mkdtempSync(path.join(repoRoot, 'test-results', 'codex-sandbox-'));
  const all = [ECHO, ...BUILDS.map((b) => b.command), FORBIDDEN];
  // Last, a command the model polls to its end: no later Bash call's hook could catch its capture up.
  await Promise.all([start('writeSpillway', 'workspace-write', [...all, { cmd: SLOW_COMMAND, yieldMs: 300 }], true), start('writeAlone', 'workspace-write', [ECHO, FORBIDDEN], false)]);
  const readOnly: ScriptedCommand[] = [ECHO, ...BUILDS.map((b) => b.command), { cmd: SLOW_COMMAND, yieldMs: 300 }, FORBIDDEN];
  await Promise.all([
    start('readOnlySpillway', 'read-only', readOnly, true),
    start('readOnlyAlone', 'read-only', [ECHO, FORBIDDEN], false),
    start('fullAccessSpillway', 'danger-full-access', [BUILDS[1]!.command], true),
  ]);
  for (const r of Object.values(runs)) expect(r.run.code, r.run.stderr.slice(-2000)).toBe(0);
}, 600_000);

afterAll(async () => {
  await Promise.all(Object.values(runs).map((r) => r.mock.close()));
  if (process.env.KEEP_E2E) return;
  for (const r of Object.values(runs)) fs.rmSync(r.tmpdir, { recursive: true, force: true });
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

describe('real Codex with the Spillway hook, -s workspace-write', () => {
  it.each(BUILDS.map((b) => [b.bytes, b] as const))('a failing build of %i bytes reaches the model with its failure line, exit code and final path, which holds all of it', (_bytes, build) => {
    const { home, work } = runs.writeSpillway;
    const seen = outputFor(lastRequest('writeSpillway'), build.command);
    expect(seen).toContain(`Process exited with code ${build.exitCode}`);
    expect(seen, seen.slice(0, 3000)).toContain(build.failureLine);
    expect(seen).toContain(`[spillway: the command exited with code ${build.exitCode}; its complete output (stdout and stderr) is in `);
    const file = /complete output \(stdout and stderr\) is in (\S+)\]/.exec(seen)![1]!;
    expect(path.dirname(path.dirname(file))).toBe(path.join(home, 'spillway'));
    expect(path.basename(file)).toMatch(/^bash-call_mock\d+\.txt$/);
    expect(fs.readFileSync(file, 'utf8')).toBe(fullOutputOf(build, work));
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect((fs.statSync(path.dirname(file)).mode & 0o777).toString(8)).toBe('700');
    const manifest = fs.readFileSync(path.join(path.dirname(file), 'spillway.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const callId = path.basename(file).slice('bash-'.length, -'.txt'.length);
    expect(manifest.filter((r) => r.toolCallId === callId)).toHaveLength(1);
  });

  it('each file is at its final path before the model\'s next request (moved by the PostToolUse hook)', () => {
    const files = BUILDS.map((b) => /complete output \(stdout and stderr\) is in (\S+)\]/.exec(outputFor(lastRequest('writeSpillway'), b.command))![1]!);
    expect(files.map((f) => runs.writeSpillway.onDiskAtNextRequest.get(f))).toEqual(BUILDS.map(() => true));
  });

  it('a command still running when its call returned, the session\'s last, is moved too (Codex sends its PostToolUse once it has ended): its digest\'s path holds the whole output', () => {
    const { home, work } = runs.writeSpillway;
    const seen = outputFor(lastRequest('writeSpillway'), SLOW_COMMAND);
    expect(seen).toMatch(/Process running with session ID/);
    expect(seen).toContain(SLOW.failureLine);
    const file = /complete output \(stdout and stderr\) is in (\S+)\]/.exec(seen)![1]!;
    expect(path.dirname(path.dirname(file))).toBe(path.join(home, 'spillway'));
    expect(fs.readFileSync(file, 'utf8')).toBe(fullOutputOf(SLOW, work));
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
  });

  it('no capture is left in $TMPDIR: every one was moved', () => {
    expect(fs.readdirSync(runs.writeSpillway.tmpdir).filter((n) => n.startsWith('spillway-codex-'))).toEqual([]);
  });

  it('echo ok reaches the model as without Spillway', () => {
    const withSpillway = bodyOf(outputFor(lastRequest('writeSpillway'), ECHO));
    // Before it, whatever the login shell's profile prints in the sandbox (the same with or without Spillway).
    expect(withSpillway.endsWith('ok\n')).toBe(true);
    expect(withSpillway).toBe(bodyOf(outputFor(lastRequest('writeAlone'), ECHO)));
  });

  it('a forbidden command stays refused, with the same answer', () => {
    const steady = (text: string) => text.replace(/Chunk ID: \w+|Wall time: [\d.]+ seconds/g, '');
    const seen = outputFor(lastRequest('writeSpillway'), FORBIDDEN);
    expect(seen).toMatch(/rejected|forbidden|not permitted/i);
    expect(steady(seen)).toBe(steady(outputFor(lastRequest('writeAlone'), FORBIDDEN)));
    expect(fs.existsSync(path.join(runs.writeSpillway.work, 'forbidden-1'))).toBe(false);
  });

  it('spillway list and grep find the moved captures', () => {
    const listed = spillway(['list', '--json'], runs.writeSpillway.home);
    expect(listed.status, listed.stderr).toBe(0);
    const catalog = JSON.parse(listed.stdout) as { sessions: Array<{ source: string; blobs: Array<{ tool?: string; toolCallId?: string }> }> };
    const sessions = catalog.sessions.filter((s) => s.source === 'codex');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.blobs).toHaveLength(BUILDS.length + 1);
    for (const blob of sessions[0]!.blobs) expect(blob.tool).toBe('Bash');
    const grep = spillway(['grep', BUILDS[2]!.failureLine], runs.writeSpillway.home);
    expect(grep.status, grep.stderr).toBe(0);
    expect(grep.stdout).toContain(`:${BUILDS[2]!.failureAt}:${BUILDS[2]!.failureLine}`);
  });
});

describe('real Codex with the Spillway hook, -s read-only', () => {
  it.each([...BUILDS.map((b) => [`${b.bytes} bytes`, b, b.command] as const), ['still running after the first answer', SLOW, SLOW_COMMAND] as const])('a failing build (%s) reaches the model with its failure line, its line number and the exit code', (_name, build, command) => {
    const seen = outputFor(lastRequest('readOnlySpillway'), command);
    expect(seen).toContain(`Process exited with code ${build.exitCode}`);
    expect(seen, seen.slice(0, 3000)).toContain(`[line ${build.failureAt}] ${build.failureLine}`);
    expect(seen).toContain(`[spillway: the command exited with code ${build.exitCode}; its whole output could not be kept: the sandbox lets nothing be written]`);
    expect(seen).not.toContain('complete output (stdout and stderr) is in');
    // The head and the tail of the build are there too.
    expect(seen).toContain('[000001] unit_1 ok, 0 failed');
    expect(seen).toContain('build finished: 1 unit failed');
  });

  it('a command still running at the first answer: that answer holds none of its output, the digest comes when it ends', () => {
    const pieces = outputFor(lastRequest('readOnlySpillway'), SLOW_COMMAND).split(/(?=^Chunk ID: )/m);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces[0]).toMatch(/Process running with session ID/);
    expect(bodyOf(pieces[0]!)).not.toContain('unit_');
    expect(pieces[pieces.length - 1]).toContain(`[spillway: the command exited with code ${SLOW.exitCode};`);
  });

  it('echo ok reaches the model as without Spillway', () => {
    const withSpillway = bodyOf(outputFor(lastRequest('readOnlySpillway'), ECHO));
    expect(withSpillway.endsWith('ok\n')).toBe(true);
    expect(withSpillway).toBe(bodyOf(outputFor(lastRequest('readOnlyAlone'), ECHO)));
  });

  it('a forbidden command stays refused, with the same answer', () => {
    const steady = (text: string) => text.replace(/Chunk ID: \w+|Wall time: [\d.]+ seconds/g, '');
    const seen = outputFor(lastRequest('readOnlySpillway'), FORBIDDEN);
    expect(seen).toMatch(/rejected|forbidden|not permitted/i);
    expect(steady(seen)).toBe(steady(outputFor(lastRequest('readOnlyAlone'), FORBIDDEN)));
    expect(fs.existsSync(path.join(runs.readOnlySpillway.work, 'forbidden-1'))).toBe(false);
  });

  it('writes nothing: no capture folder in $TMPDIR, nothing in the work folder, no blob', () => {
    // Codex's sandbox leaves its own `codex-bwrap-*` entry there, with or without Spillway.
    const ours = (dir: string) => fs.readdirSync(dir).filter((n) => !n.startsWith('codex-bwrap-'));
    expect(ours(runs.readOnlySpillway.tmpdir)).toEqual([]);
    expect(ours(runs.readOnlyAlone.tmpdir)).toEqual([]);
    expect(fs.readdirSync(runs.readOnlySpillway.work)).toEqual([]);
    const sessions = path.join(runs.readOnlySpillway.home, 'spillway');
    const files = fs.existsSync(sessions) ? fs.readdirSync(sessions).flatMap((s) => fs.readdirSync(path.join(sessions, s))) : [];
    expect(files.filter((f) => f.startsWith('bash-'))).toEqual([]);
  });
});

describe('real Codex with the Spillway hook, -s danger-full-access', () => {
  it('takes the same path: the digest names the final path, which holds the whole output; nothing is left in $TMPDIR', () => {
    const { home, work, tmpdir } = runs.fullAccessSpillway;
    const build = BUILDS[1]!;
    const seen = outputFor(lastRequest('fullAccessSpillway'), build.command);
    expect(seen).toContain(build.failureLine);
    const file = /complete output \(stdout and stderr\) is in (\S+)\]/.exec(seen)![1]!;
    expect(path.dirname(path.dirname(file))).toBe(path.join(home, 'spillway'));
    expect(fs.readFileSync(file, 'utf8')).toBe(fullOutputOf(build, work));
    expect(runs.fullAccessSpillway.onDiskAtNextRequest.get(file)).toBe(true);
    expect(fs.readdirSync(tmpdir).filter((n) => n.startsWith('spillway-codex-'))).toEqual([]);
  });
});
