// The Bash capture on the REAL Claude Code 2.1.332, offline against the mock
// Messages API, installed by `spillway hook install claude-code` (the shell
// prefix in settings.json `env`): failing builds of 20 KB, 300 KB and 5 MB (exit
// 1 and 2) with the failure line at a random place in the middle among decoys
// must reach the model with that line, the exit code and the path of a file
// holding the complete output, in the default permission mode under prefix allow
// rules, in acceptEdits and in bypassPermissions; a short `echo ok` must reach it
// unchanged; `cd` must still hold in the next call; a deny rule must deny with
// Claude Code's own message (as without Spillway) and write nothing.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashScript, CLAUDE_BIN_RELATIVE, claudeDirs, offlineClaudeEnv, runClaude, startMockAnthropic, toolResults, type MessagesRequest, type MockAnthropic, type MockReply } from './helpers/mock-anthropic';
import { failingBuild, fullOutputOf, ledgerCi, type FailingBuild } from './helpers/failing-build';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');
const claudeBin = path.join(repoRoot, ...CLAUDE_BIN_RELATIVE);

// Each kind of failure line, the compiler's twice (the first and the last build).
const BUILDS: FailingBuild[] = [
  failingBuild(20_000, 1, Math.random, 0),
  failingBuild(20_000, 2, Math.random, 1),
  failingBuild(300_000, 1, Math.random, 2),
  failingBuild(300_000, 2, Math.random, 3),
  failingBuild(5_000_000, 1, Math.random, 4),
  failingBuild(5_000_000, 2, Math.random, 0),
  failingBuild(300_000, 1, Math.random, 0, true), // a compiler's verdict and, under it, where
  failingBuild(300_000, 1, Math.random, 5), // a script's unset variable under set -u: the shell's own line
];
const ECHO = 'echo ok';
const MKDIR = 'mkdir -p nested/dir';
const CD = 'cd nested/dir';
const PWD = 'pwd';
const DENIED_RM = 'rm -f keep.txt';
const RULES = { allow: ['Bash(ledger-ci:*)', 'Bash(echo:*)', 'Bash(mkdir:*)', 'Bash(cd:*)', 'Bash(pwd)'], deny: ['Bash(rm:*)'] };
const MODES = ['default', 'acceptEdits', 'bypassPermissions'] as const;

beforeAll(() => {
  if (!fs.existsSync(cli)) throw new Error('run `npm run build` first: dist/cli.js is missing');
  if (!fs.existsSync(claudeBin)) throw new Error(`the Claude Code binary is missing: ${claudeBin} (npm ci installs it)`);
});

/** A home with a Claude config folder whose settings hold `extra`, with Spillway installed (by its CLI) unless `spillway` is false. */
function homeWithHooks(prefix: string, extra: Record<string, unknown> = {}, spillway = true): { home: string; configDir: string; workDir: string } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const dirs = claudeDirs(home);
  const settingsFile = path.join(dirs.configDir, 'settings.json');
  fs.writeFileSync(settingsFile, JSON.stringify(extra, null, 2));
  if (spillway) {
    const install = spawnSync(process.execPath, [cli, 'hook', 'install', 'claude-code', '--user'], { encoding: 'utf8', env: { ...process.env, CLAUDE_CONFIG_DIR: dirs.configDir } });
    expect(install.status, install.stderr).toBe(0);
    expect(install.stdout).toContain('env.CLAUDE_CODE_SHELL_PREFIX');
  }
  return { home, ...dirs };
}

interface Session {
  home: string;
  configDir: string;
  workDir: string;
  mock: MockAnthropic;
  run: { code: number | null; stdout: string; stderr: string };
  commandFor: (i: number) => string;
}

/** One Claude Code run in `mode` under RULES with `ledger-ci` on PATH: the builds, then `after`. */
async function session(mode: string, spillway: boolean, after: string[]): Promise<Session> {
  const { home, configDir, workDir } = homeWithHooks(`spillway-capture-${mode}-`, { permissions: RULES }, spillway);
  fs.writeFileSync(path.join(workDir, 'keep.txt'), 'kept\n');
  const { binDir, commandFor } = ledgerCi(home, BUILDS);
  const mock = await startMockAnthropic(bashScript([...BUILDS.map((_, i) => commandFor(i)), ...after], 'done'));
  const env = { ...offlineClaudeEnv({ home, configDir, baseUrl: mock.url }), PATH: `${binDir}:${process.env.PATH}` };
  const run = await runClaude({ bin: claudeBin, prompt: 'Build it', cwd: workDir, env, permissions: ['--permission-mode', mode] });
  await mock.close();
  return { home, configDir, workDir, mock, run, commandFor };
}

/** What the model was sent for the call that ran `command`. */
function seenIn(mock: MockAnthropic, command: string): string {
  const last = mock.requests[mock.requests.length - 1]!;
  const uses = last.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<Record<string, any>>) : [])).filter((b) => b.type === 'tool_use');
  const use = uses.find((u) => u.input?.command === command);
  expect(use, `no tool_use for ${command.slice(0, 80)}`).toBeDefined();
  return toolResults(last).find((r) => r.tool_use_id === use!.id)!.text;
}

const CAPTURE_FILE = /(\/\S+\/spillway\/bash-[^\s\]]+\.txt)/;

let withoutSpillway: Session;
beforeAll(async () => {
  withoutSpillway = await session('default', false, [DENIED_RM]);
}, 300_000);
afterAll(() => {
  if (withoutSpillway && !process.env.KEEP_E2E) fs.rmSync(withoutSpillway.home, { recursive: true, force: true });
});

for (const mode of MODES) {
  describe(`Claude Code 2.1.332 with the Bash capture, --permission-mode ${mode}`, () => {
    let s: Session;
    beforeAll(async () => {
      s = await session(mode, true, [ECHO, MKDIR, CD, PWD, DENIED_RM]);
    }, 300_000);
    afterAll(() => {
      if (s && !process.env.KEEP_E2E) fs.rmSync(s.home, { recursive: true, force: true });
    });

    it('runs every command and finishes', () => {
      expect(s.run.code, s.run.stderr.slice(-2000)).toBe(0);
      expect(toolResults(s.mock.requests[s.mock.requests.length - 1]!)).toHaveLength(BUILDS.length + 5);
    });

    for (const [i, build] of BUILDS.entries()) {
      it(`build ${i + 1}: ${build.bytes.toLocaleString('en')} bytes, exit ${build.exitCode}: failure line, exit code and the complete output's file reach the model`, () => {
        const seen = seenIn(s.mock, s.commandFor(i));
        expect(seen.length).toBeLessThan(4_000);
        expect(seen, `failure line ${build.failureLine} at line ${build.failureAt}`).toContain(build.failureLine);
        if (build.locationLine) expect(seen).toContain(`[line ${build.failureAt + 1}] ${build.locationLine}\n`);
        expect(seen).toMatch(new RegExp(`^Exit code ${build.exitCode}\n`));
        expect(seen).toContain(`exited with code ${build.exitCode}`);
        const file = CAPTURE_FILE.exec(seen)?.[1];
        expect(file, seen.slice(0, 500)).toBeDefined();
        expect(fs.readFileSync(file!, 'utf8')).toBe(fullOutputOf(build, s.workDir));
        expect(fs.statSync(file!).mode & 0o777).toBe(0o600);
        expect(fs.statSync(path.dirname(file!)).mode & 0o777).toBe(0o700);
      });
    }

    it('hands a short output to the model unchanged', () => {
      expect(seenIn(s.mock, ECHO)).toBe('ok');
    });

    it('keeps a cd for the next call', () => {
      expect(seenIn(s.mock, PWD)).toBe(path.join(fs.realpathSync(s.workDir), 'nested', 'dir'));
    });

    it('denies `rm` with Claude Code\'s own message, as without Spillway, and runs nothing', () => {
      expect(seenIn(s.mock, DENIED_RM)).toBe(seenIn(withoutSpillway.mock, DENIED_RM));
      expect(seenIn(s.mock, DENIED_RM)).toMatch(/^Permission to use Bash with command rm -f keep\.txt has been denied/);
      expect(fs.existsSync(path.join(s.workDir, 'keep.txt'))).toBe(true);
    });

    it('lists each capture once, as Bash with its command, in `spillway list --json`, and keeps nothing else', () => {
      const res = spawnSync(process.execPath, [cli, 'list', '--json', '--no-default-roots', '--root', s.configDir, '--source', 'claude-code'], {
        encoding: 'utf8',
        env: { ...process.env, HOME: s.home, CLAUDE_CONFIG_DIR: s.configDir },
      });
      expect(res.status, res.stderr).toBe(0);
      const blobs = (JSON.parse(res.stdout) as { sessions: Array<{ blobs: Array<{ path: string; tool: string | null; args: unknown }> }> }).sessions.flatMap((x) => x.blobs);
      const captures = blobs.filter((b) => /\/spillway\/bash-/.test(b.path));
      expect(captures).toHaveLength(BUILDS.length);
      for (const c of captures) expect(c.tool).toBe('Bash');
      expect(captures.map((c) => c.args).sort()).toEqual(BUILDS.map((_, i) => s.commandFor(i)).sort());
      expect(blobs.filter((b) => /tool-results/.test(b.path))).toHaveLength(0);
      const files = fs.readdirSync(path.join(s.configDir, 'projects'), { recursive: true, encoding: 'utf8' }).filter((f) => /spillway\/bash-/.test(f));
      expect(files).toHaveLength(BUILDS.length);
    });
  });
}

describe('Claude Code 2.1.332 with the Bash capture: background and timeout', () => {
  const build = failingBuild(300_000, 2, Math.random, 0);
  // Prints past the threshold, then outruns its 3 s timeout: Claude Code moves it to the background.
  const SLOW = `seq 1 3000 | sed 's/$/ step ok/'; echo "FATAL: worker 7 lost its lease"; seq 1 2000; sleep 6; exit 4`;
  let seen: string[] = [];
  let whileRunning = '';
  let workDir2 = '';

  beforeAll(async () => {
    const { home, ...dirs } = homeWithHooks('spillway-capture-bg-');
    workDir2 = dirs.workDir;
    const outputFileOf = (req: MessagesRequest, n: number): string => /(\/\S+\.output)\b/.exec(toolResults(req)[n]!.text)?.[1] ?? '/nonexistent';
    const steps: Array<(req: MessagesRequest) => MockReply> = [
      () => ({ kind: 'tool_use', name: 'Bash', input: { command: build.command, run_in_background: true } }),
      () => ({ kind: 'tool_use', name: 'Bash', input: { command: 'sleep 4' } }),
      // Read the background task's output file, which the first result names.
      (req) => ({ kind: 'tool_use', name: 'Read', input: { file_path: outputFileOf(req, 0) } }),
      () => ({ kind: 'tool_use', name: 'Bash', input: { command: SLOW, timeout: 3000 } }),
      (req) => {
        // Its output file while it still runs: what it printed so far, live.
        whileRunning = fs.readFileSync(outputFileOf(req, 3), 'utf8');
        return { kind: 'tool_use', name: 'Bash', input: { command: 'sleep 8' } };
      },
      (req) => ({ kind: 'tool_use', name: 'Read', input: { file_path: outputFileOf(req, 3) } }),
    ];
    const m = await startMockAnthropic((req) => {
      if (!(req.tools ?? []).some((t) => t.name === 'Bash')) return { kind: 'text', text: 'ok' };
      const n = toolResults(req).length;
      return n < steps.length ? steps[n]!(req) : { kind: 'text', text: 'done' };
    });
    try {
      await runClaude({ bin: claudeBin, prompt: 'go', cwd: dirs.workDir, env: offlineClaudeEnv({ home, configDir: dirs.configDir, baseUrl: m.url }) });
      seen = toolResults(m.requests[m.requests.length - 1]!).map((r) => r.text);
    } finally {
      await m.close();
      if (!process.env.KEEP_E2E) setTimeout(() => fs.rmSync(home, { recursive: true, force: true }), 25_000).unref();
    }
  }, 180_000);

  it('a build run in the background and read later: its output file holds the digest', () => {
    const read = seen[2]!;
    expect(read).toContain(build.failureLine);
    expect(read).toContain('exited with code 2');
    const file = CAPTURE_FILE.exec(read)?.[1];
    expect(fs.readFileSync(file!, 'utf8')).toBe(fullOutputOf(build, workDir2));
  });

  it('a command moved to the background by its timeout: its output file fills while it runs, and ends as the digest', () => {
    expect(whileRunning).toContain('3000 step ok\nFATAL: worker 7 lost its lease\n1\n');
    const read = seen[5]!;
    expect(read).toContain('FATAL: worker 7 lost its lease');
    expect(read).toContain('exited with code 4');
    expect(read.length).toBeLessThan(8_000);
  });
});

// Claude Code checks deny rules, even in bypassPermissions sessions, against the command it runs: the wrapper.
// The user's command must be denied exactly as it was alone, and Spillway's own steps (its rm and cat of its
// own capture file) must not make every command match a rule such as `Bash(rm:*)`.
describe('Claude Code 2.1.332 with the Bash capture: the user\'s deny rules', () => {
  const build = failingBuild(300_000, 1, Math.random, 2);

  /** A session with these deny rules running these commands: what the model got for each, and the work folder's files after. */
  async function withDenyRules(deny: string[], commands: string[]): Promise<{ seen: string[]; left: string[] }> {
    const { home, ...dirs } = homeWithHooks('spillway-capture-deny-', { permissions: { deny } });
    fs.writeFileSync(path.join(dirs.workDir, 'keep.txt'), 'kept\n');
    const m = await startMockAnthropic(bashScript(commands, 'done'));
    try {
      await runClaude({ bin: claudeBin, prompt: 'go', cwd: dirs.workDir, env: offlineClaudeEnv({ home, configDir: dirs.configDir, baseUrl: m.url }) });
      return { seen: toolResults(m.requests[m.requests.length - 1]!).map((r) => r.text), left: fs.readdirSync(dirs.workDir) };
    } finally {
      await m.close();
      if (!process.env.KEEP_E2E) fs.rmSync(home, { recursive: true, force: true });
    }
  }

  const DENIED = /^Permission to use Bash with command [^]* has been denied/;

  it('denies a command a deny rule names, also inside a compound command, and runs none of it', async () => {
    const { seen, left } = await withDenyRules(['Bash(touch:*)', 'Bash(mv:*)'], ['touch made-anyway.txt', 'echo one && mv keep.txt moved.txt', 'echo ok']);
    expect(seen[0]).toMatch(DENIED);
    expect(seen[1]).toMatch(DENIED);
    expect(seen[2]).toBe('ok');
    expect(left.sort()).toEqual(['keep.txt']);
  }, 180_000);

  it('runs and captures the others when rules name the tools Spillway itself uses (rm, cat)', async () => {
    const { seen, left } = await withDenyRules(['Bash(rm:*)', 'Bash(cat:*)'], ['rm -f keep.txt', build.command, 'echo ok']);
    expect(seen[0]).toMatch(DENIED);
    expect(left).toContain('keep.txt');
    expect(seen[1]).toContain(build.failureLine);
    expect(seen[1]).toContain('exited with code 1');
    expect(seen[1]).toMatch(/\/spillway\/bash-[^\s\]]+\.txt/);
    expect(seen[2]).toBe('ok');
  }, 180_000);
});

// Claude Code's sandbox (bubblewrap; `sandbox.enabled`) mounts its config folder read-only for the command, so the
// shell cannot write the capture file there: each command must then run and reach the model as without Spillway.
describe('Claude Code 2.1.332 with the Bash capture, in its sandbox', () => {
  const build = failingBuild(300_000, 1, Math.random, 3);
  let seen: string[] = [];
  let spillFiles: string[] = [];
  let configDir = '';

  beforeAll(async () => {
    const { home, ...dirs } = homeWithHooks('spillway-capture-sandbox-', { sandbox: { enabled: true } });
    configDir = dirs.configDir;
    const probe = `touch '${path.join(configDir, 'probe')}' 2>/dev/null && echo wrote || echo refused`;
    const m = await startMockAnthropic(bashScript([probe, 'echo hi && echo there >&2', build.command], 'done'));
    try {
      await runClaude({ bin: claudeBin, prompt: 'go', cwd: dirs.workDir, env: offlineClaudeEnv({ home, configDir, baseUrl: m.url }) });
      seen = toolResults(m.requests[m.requests.length - 1]!).map((r) => r.text);
      spillFiles = fs.readdirSync(path.join(configDir, 'projects'), { recursive: true, encoding: 'utf8' }).filter((f) => /spillway\/bash-/.test(f));
    } finally {
      await m.close();
      if (!process.env.KEEP_E2E) fs.rmSync(home, { recursive: true, force: true });
    }
  }, 180_000);

  it('runs sandboxed (the config folder is read-only to the command)', () => {
    expect(seen[0]).toBe('refused');
  });

  it('hands each output to the model as Claude Code gives it, with no Spillway note and no file left', () => {
    expect(seen[1]).toBe('hi\nthere');
    expect(seen[2]).toMatch(/^Exit code 1\n/);
    expect(seen[2]).not.toContain('[spillway:');
    expect(spillFiles).toEqual([]);
  });
});
