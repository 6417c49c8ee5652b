// The CLI as a child process over a fixture home (every layout).
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCleanupPolicy } from '../../../src/catalog/clean/cleanupPolicy';
import { LocalSpillStore } from '../../../src/spill/local-store';
import { buildFixtureHome, REAL_CLAUDE_FIXTURES, type FixtureHome } from '../../fixtures/build-home';
import { CLI, ensureBuilt, runCli } from './helpers';

let dir: string;
let fx: FixtureHome;
const roots = (): string[] => fx.userRoots.flatMap((r) => ['--root', r]);

beforeAll(async () => {
  ensureBuilt();
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-cli-'));
  fx = await buildFixtureHome(dir);
});
afterAll(async () => fsp.rm(dir, { recursive: true, force: true }));

interface ListJson {
  sessions: Array<{ source: string; id: string; title: string | null; cwd: string | null; dir: string; bytes: number; blobs: Array<{ path: string; tool: string | null; toolCallId: string | null; args: string | null; bytes: number; createdAt: string; turn: number | null }> }>;
  skipped: number;
}

describe('spillway list', () => {
  it('prints every layout as JSON with the documented shape', async () => {
    const run = await runCli(['list', '--json', ...roots()], fx.env);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as ListJson;
    expect(new Set(out.sessions.map((s) => s.source))).toEqual(new Set(['claude-code', 'pi', 'spillway', 'gemini-cli', 'opencode', 'dsh', 'orgrt']));
    const claude = out.sessions.find((s) => s.id === fx.claude.sessionId)!;
    expect(Object.keys(claude)).toEqual(expect.arrayContaining(['source', 'id', 'title', 'cwd', 'dir', 'bytes', 'blobs']));
    const grep = claude.blobs.find((b) => b.path === fx.claude.blobs.grep)!;
    expect(grep).toMatchObject({ tool: 'Grep', toolCallId: 'toolu_01GrepAAAAAAAAAAAAAAAAAAAA', args: 'TODO', turn: 1 });
    expect(grep.bytes).toBe((await fsp.stat(fx.claude.blobs.grep)).size);
    expect(claude.bytes).toBe(claude.blobs.reduce((s, b) => s + b.bytes, 0));
    expect(out.skipped).toBeGreaterThanOrEqual(6);
  });

  it('says when a root given with --root is missing or not a folder, and lists the rest', async () => {
    const missing = path.join(dir, 'no-such-root');
    const file = path.join(dir, 'a-file-root');
    await fsp.writeFile(file, 'x');
    const run = await runCli(['list', '--json', '--no-default-roots', '--root', missing, '--root', file, '--root', path.join(fx.home, '.pi')], fx.env);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`spillway: root ${missing}: no such folder\n`);
    expect(run.stderr).toContain(`spillway: root ${file}: not a folder\n`);
    expect((JSON.parse(run.stdout) as ListJson).sessions.map((s) => s.source)).toContain('pi');
    // A default root that is missing is an agent not installed: nothing to say.
    expect((await runCli(['list', '--json'], { ...fx.env, CLAUDE_CONFIG_DIR: missing })).stderr).not.toContain('no such folder');
  });

  it('refuses an empty --root (an unset variable) instead of scanning the folder it runs in', async () => {
    for (const command of [['list'], ['grep', 'x'], ['clean', '--older-than', '7d', '--dry-run']]) {
      const run = await runCli([...command, '--root', fx.userRoots[0]!, '--root', ''], fx.env);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(`spillway ${command[0]}: --root is empty (give a folder; '.' for this one)\n`);
      expect(run.stdout).toBe('');
    }
  });

  it('--no-default-roots with --root scans only that folder; --source filters', async () => {
    const run = await runCli(['list', '--json', '--no-default-roots', '--root', path.join(fx.home, '.pi'), '--source', 'pi'], fx.env);
    const out = JSON.parse(run.stdout) as ListJson;
    expect(out.sessions.map((s) => s.source)).toEqual(['pi']);
  });

  it('shows blobs the engine writes, with their tool names', async () => {
    const store = new LocalSpillStore({ root: path.join(fx.env.XDG_STATE_HOME!, 'spillway', 'spills') });
    const ref = await store.saveText({ owner: { sessionId: 'engine-session' }, source: { toolName: 'Bash', callId: 'call-e1', label: 'make' }, suggestedName: 'make.txt', content: 'x\n'.repeat(5000), args: { command: 'make' } });
    const run = await runCli(['list', '--json'], fx.env);
    const out = JSON.parse(run.stdout) as ListJson;
    const blob = out.sessions.flatMap((s) => s.blobs).find((b) => b.path === ref.locator);
    expect(blob).toMatchObject({ tool: 'Bash', toolCallId: 'call-e1', args: 'make' });
    expect(out.sessions.find((s) => s.blobs.includes(blob!))!.id).toBe('engine-session');
  });

  it("attributes Claude Code's own b<id>.txt once Spillway's hook recorded it (real 2.1.332 hook input)", async () => {
    const realSession = 'a8596db4-f8da-40c2-9db5-c17f7cb847a8';
    const stdin = (await fsp.readFile(path.join(REAL_CLAUDE_FIXTURES, 'run2', 'hook-stdin', 'hookstdin-1.json'), 'utf8')).split('/home/dev/.claude').join(path.join(fx.home, '.claude'));
    const before = JSON.parse((await runCli(['list', '--json'], fx.env)).stdout) as ListJson;
    const blobs = () => before.sessions.find((s) => s.id === realSession)!.blobs;
    expect(blobs().every((b) => b.tool === null)).toBe(true);
    const hook = spawnSync(process.execPath, [CLI, 'hook', 'claude-code'], { input: stdin, env: fx.env, encoding: 'utf8' });
    expect(hook.status).toBe(0);
    const after = JSON.parse((await runCli(['list', '--json'], fx.env)).stdout) as ListJson;
    const named = after.sessions.find((s) => s.id === realSession)!.blobs.find((b) => b.path.endsWith('bc7uj3z4s.txt'))!;
    expect(named).toMatchObject({ tool: 'Bash', args: 'seq 1 60000', toolCallId: 'toolu_01PKQRdTmsuIH90t8PKxHq6Pfq', turn: 1 });
  });

  it('prints a readable table', async () => {
    const run = await runCli(['list'], fx.env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('claude-code  ' + fx.claude.sessionId);
    expect(run.stdout).toMatch(/Grep\s+turn 1\s+TODO/);
  });

  it('rejects bad arguments with exit code 2 and a clear message', async () => {
    const bad = await runCli(['list', '--source', 'nope'], fx.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown source 'nope'");
    const unknown = await runCli(['list', '--frobnicate'], fx.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--frobnicate');
  });
});

describe('spillway show', () => {
  it('prints a 1-based inclusive line range', async () => {
    const run = await runCli(['show', fx.claude.blobs.shell, '--lines', '3989:3991'], fx.env);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('[build] step 3989 ok\nnpm ERR! build failed: exit code 2\n[build] step 3991 ok\n');
  });
  it('prints a whole file, and fails clearly on a bad range or a missing file', async () => {
    const whole = await runCli(['show', fx.dsh.blob], fx.env);
    expect(whole.stdout).toBe(await fsp.readFile(fx.dsh.blob, 'utf8'));
    const range = await runCli(['show', fx.dsh.blob, '--lines', '9:3'], fx.env);
    expect(range.code).toBe(2);
    expect(range.stderr).toContain('invalid --lines');
    // The path first, then the reason in words and its code, not Node's `ENOENT: ..., open '...'`.
    for (const args of [['--lines', '1:2'], []]) {
      const missing = await runCli(['show', path.join(dir, 'nope.txt'), ...args], fx.env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toBe(`spillway show: ${path.join(dir, 'nope.txt')}: No such file or directory (ENOENT)\n`);
    }
    // A line break in the name is shown escaped: it cannot make a line of output of its own.
    const forged = await runCli(['show', path.join(dir, 'a\nspillway show: all good')], fx.env);
    expect(forged.stderr).toBe(`spillway show: ${path.join(dir, 'a')}\\nspillway show: all good: No such file or directory (ENOENT)\n`);
  });
  it("says where a blob really ends past its last line, and keeps a last line's missing newline", async () => {
    const noFinal = path.join(fx.dsh.dir, 'cc33dd44-nofinal.txt');
    const empty = path.join(fx.dsh.dir, 'cc33dd45-empty.txt');
    await fsp.writeFile(noFinal, 'a\nb\nc');
    await fsp.writeFile(empty, '');
    for (const [file, lines, stdout, last] of [
      [noFinal, '100:200', '', 3],
      [noFinal, '9007199254740991:9007199254740991', '', 3],
      [noFinal, '2:9', 'b\nc', 3],
      [empty, '50:60', '', 0],
    ] as const) {
      const run = await runCli(['show', file, '--lines', lines], fx.env);
      expect(run.stdout, lines).toBe(stdout);
      expect(run.stderr, lines).toContain(`ends at line ${last}\n`);
    }
    expect((await runCli(['show', noFinal, '--lines', '1:2'], fx.env)).stdout).toBe('a\nb\n');
  });
});

describe('spillway grep', () => {
  it('finds matches across blobs as JSON, capped by --max', async () => {
    const run = await runCli(['grep', 'npm ERR!', '--json', ...roots()], fx.env);
    const out = JSON.parse(run.stdout) as { matches: Array<{ path: string; line: number; text: string }> };
    expect(out.matches).toContainEqual({ path: fx.claude.blobs.shell, line: 3990, text: 'npm ERR! build failed: exit code 2' });
    const capped = JSON.parse((await runCli(['grep', 'line', '--json', '--max', '5'], fx.env)).stdout) as { matches: unknown[]; truncated: boolean };
    expect(capped.matches).toHaveLength(5);
    expect(capped.truncated).toBe(true);
  });
  it('exits as grep does: 0 when something matched, 1 when nothing did, 2 when it cannot search', async () => {
    expect((await runCli(['grep', 'npm ERR!', ...roots()], fx.env)).code).toBe(0);
    const none = await runCli(['grep', 'no-such-text-in-any-blob-7f3a', ...roots()], fx.env);
    expect(none).toMatchObject({ code: 1, stdout: '', stderr: '' });
    expect((await runCli(['grep', 'no-such-text-in-any-blob-7f3a', '--json', ...roots()], fx.env)).code).toBe(1);
    const noRg = path.join(os.tmpdir(), 'no-such-rg-7f3a');
    const failed = await runCli(['grep', 'npm', '--engine', 'rg', '--rg', noRg, ...roots()], fx.env);
    expect(failed).toMatchObject({ code: 2, stdout: '' });
    expect(failed.stderr).toMatch(/ripgrep not executable/);
    // A ripgrep named is the one asked for, without --engine too: not a quiet search with the Node engine.
    expect(await runCli(['grep', 'npm', '--rg', noRg, ...roots()], fx.env)).toMatchObject({ code: 2, stdout: '', stderr: `spillway grep: ripgrep not executable at ${noRg}\n` });
  });
  it('rejects an invalid regex and a bad --max with exit code 2', async () => {
    expect((await runCli(['grep', '(', '--regex'], fx.env)).code).toBe(2);
    expect((await runCli(['grep', 'x', '--max', 'zero'], fx.env)).code).toBe(2);
  });
});

describe('spillway turns', () => {
  it('prints the per-turn series and the tokens-saved estimate', async () => {
    const run = await runCli(['turns', fx.claude.sessionId, '--json'], fx.env);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as {
      points: Array<{ promptTokens: number; delta: number; compaction: boolean; parts: Array<{ kind: string; tool?: string; tokens: number; spilled?: boolean; path?: string }>; drop: { kind: string; tokens: number } | null }>;
      blobs: Array<{ path: string; readBack: number }>;
      tokensSaved: { tokens: number; charsPerToken: number };
    };
    expect(out.points.map((p) => p.promptTokens)).toEqual([18004, 27010, 29018, 30530, 6003, 7208, 8017]);
    // Each point says what it was made of (summing to its growth) and what dropped before it.
    for (const p of out.points) if (p.delta > 0) expect(p.parts.reduce((s, x) => s + x.tokens, 0)).toBe(p.delta);
    expect(out.points.map((p) => p.drop?.kind ?? null)).toEqual([null, null, null, null, 'compaction', null, null]);
    expect(out.points[1]!.parts.find((x) => x.kind === 'tool-result')).toMatchObject({ tool: 'Grep', spilled: true, path: fx.claude.blobs.grep });
    expect(out.blobs.every((b) => typeof b.readBack === 'number')).toBe(true);
    expect(out.tokensSaved.tokens).toBeGreaterThan(0);
    const table = await runCli(['turns', fx.claude.sessionId.slice(0, 8)], fx.env);
    expect(table.stdout).toMatch(/Tokens saved by Spillway \(estimate, 4 chars\/token, against what the agent would have shown without it\): context now \d+ smaller; \d+ input tokens not re-sent over \d+ call\(s\); \d+ blob\(s\) are the agent's own spills, not counted/);
    const missing = await runCli(['turns', 'no-such-session'], fx.env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no session 'no-such-session'");
  });
});

describe('spillway clean', () => {
  it('--policy applies the policy file the extension writes, keeping pinned blobs; without one it says where it looked', async () => {
    const env = { ...fx.env, XDG_CONFIG_HOME: path.join(fx.home, '.config-policy') };
    const none = await runCli(['clean', '--policy'], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(path.join(env.XDG_CONFIG_HOME, 'spillway', 'cleanup.json'));
    // Every fixture session was just written: a policy that would keep 1 byte still deletes nothing of them.
    const everything = await runCli(['clean', '--max-total', '1B', '--json'], env);
    const all = (JSON.parse(everything.stdout) as { items: Array<{ path: string }> }).items.map((i) => i.path);
    expect(all.length).toBeGreaterThan(1);
    await writeCleanupPolicy({ maxTotalBytes: 1, pinned: [all[0]!] }, env);
    const run = await runCli(['clean', '--policy', '--json', '--yes'], env);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { items: unknown[] }).items).toEqual([]);
    expect(run.stderr).toContain(`kept ${all.length - 1} blob(s) of sessions changed in the last hour, 1 pinned`);
    for (const p of all) await fsp.access(p);
    expect((await runCli(['clean', '--policy', '--session', 'x'], env)).code).toBe(2);
  });

  it('lists only without --yes, deletes with it, and the manifest follows', async () => {
    const sessionDir = fx.spillway.dir;
    const dry = await runCli(['clean', '--session', fx.spillway.sessionId, '--json'], fx.env);
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout) as { dryRun: boolean; items: Array<{ path: string; bytes: number }>; bytes: number };
    expect(plan.dryRun).toBe(true);
    expect(plan.items.map((i) => i.path)).toEqual([fx.spillway.blob]);
    expect(plan.bytes).toBe((await fsp.stat(fx.spillway.blob)).size);
    await fsp.access(fx.spillway.blob);

    const done = await runCli(['clean', '--session', fx.spillway.sessionId, '--yes', '--json'], fx.env);
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout).deleted).toEqual([fx.spillway.blob]);
    await expect(fsp.access(fx.spillway.blob)).rejects.toThrow();
    expect(await fsp.readFile(path.join(sessionDir, 'spillway.jsonl'), 'utf8')).toBe('');
    const after = JSON.parse((await runCli(['list', '--json'], fx.env)).stdout) as ListJson;
    expect(after.sessions.find((s) => s.id === fx.spillway.sessionId)).toBeUndefined();
    // clean does not rewrite the index: its stamps send the next scan to the changed sessions, and it agrees with no index at all.
    const cold = JSON.parse((await runCli(['list', '--json'], { ...fx.env, XDG_CACHE_HOME: path.join(fx.home, '.cache-cold') })).stdout) as ListJson;
    expect(after).toEqual(cold);
  });

  it('retention: --max-total deletes oldest first until under the size; never the symlink target', async () => {
    const old = new Date('2020-01-01T00:00:00Z');
    await fsp.utimes(fx.orgrt.blob, old, old);
    const run = await runCli(['clean', '--older-than', '365d', '--json', ...roots()], fx.env);
    const plan = JSON.parse(run.stdout) as { items: Array<{ path: string }> };
    expect(plan.items.map((i) => i.path)).toEqual([fx.orgrt.blob]);
    const sized = JSON.parse((await runCli(['clean', '--max-total', '1MB', '--json', ...roots()], fx.env)).stdout) as { items: Array<{ path: string; bytes: number }> };
    expect(sized.items[0]!.path).toBe(fx.orgrt.blob);
    expect(sized.items.map((i) => i.path)).not.toContain(fx.claude.outsideTarget);
    await fsp.access(fx.orgrt.blob); // dry run touched nothing
  });

  it('rejects contradictory or missing flags', async () => {
    expect((await runCli(['clean'], fx.env)).code).toBe(2);
    expect((await runCli(['clean', '--session', 'x', '--older-than', '7d'], fx.env)).code).toBe(2);
    const bad = await runCli(['clean', '--older-than', 'soon'], fx.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("invalid duration 'soon'");
  });
});

describe('spillway', () => {
  it('takes no name an object answers to for a command: `constructor` is unknown, with the usage', async () => {
    for (const name of ['constructor', '__proto__', 'toString']) {
      const run = await runCli([name], fx.env);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`spillway: unknown command '${name}'\n`);
      expect(run.stderr).toContain('usage: spillway <command>');
    }
  });

  it('fails, and says so, when its work stops before it finished (the event loop ran dry): never status 0 with the output cut short', () => {
    // The guard the CLI and the Bash capture's finish step run under, in a process of its own: a promise nobody settles.
    const run = (work: string) =>
      spawnSync(process.execPath, ['-e', `require(${JSON.stringify(CLI)}).failIfUnfinished(${work}, 2, (t) => process.stderr.write('spillway grep: ' + t))`], { encoding: 'utf8' });
    const stalled = run('new Promise(() => {})');
    expect(stalled.status).toBe(2);
    expect(stalled.stderr).toBe('spillway grep: stopped before it finished (an internal error: nothing was left to wait for)\n');
    const finished = run('new Promise((resolve) => setTimeout(resolve, 50))');
    expect(finished.status).toBe(0);
    expect(finished.stderr).toBe('');
    // A failure is the command's to report (main catches it): the guard says nothing of it.
    const failed = run('Promise.reject(new Error("x"))');
    expect(failed.status).toBe(0);
    expect(failed.stderr).toBe('');
  });
});
