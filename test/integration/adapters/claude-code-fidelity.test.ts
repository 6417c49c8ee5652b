// Fidelity of the Bash capture on the REAL Claude Code 2.1.332 (offline, mock
// Messages API): the same tricky calls, one Claude Code run with Spillway
// installed and one without, and every tool result whose output stays under
// the threshold must be the same text. Normalised, because they differ from one
// run to the next whatever Spillway does: each run's temp folder (and Claude
// Code's dash-encoded form of it in task file paths), session ids and
// background task ids. Nothing else is.
//
// One difference is known and asserted as such: a command that kills its own
// shell (`kill -9 $$`). Without the prefix that shell is the process Claude Code
// waits for, which reports a death by signal as `Exit code 1`; behind the prefix
// it is the prefix's child, and a POSIX shell sees only status 137 (128 + 9),
// the same as `exit 137` or a build whose last step was killed, so the prefix
// exits 137 and Claude Code says `Exit code 137`. The output is the same.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAUDE_BIN_RELATIVE, claudeDirs, offlineClaudeEnv, runClaude, startMockAnthropic, toolResults, type MessagesRequest, type MockReply } from './helpers/mock-anthropic';

const repoRoot = path.resolve(__dirname, '../../..');
const cli = path.join(repoRoot, 'dist', 'cli.js');
const claudeBin = path.join(repoRoot, ...CLAUDE_BIN_RELATIVE);

type Step = { bash: string; background?: boolean; timeout?: number } | { readOutputOf: number };

// A command line over 100 KB whose output is small (Linux takes one argument of at most 128 KiB).
const LONG_LINE = `: '${'x'.repeat(100_000)}'; echo long-line-ok`;

const STEPS: Step[] = [
  { bash: 'echo hello' },
  { bash: 'exit 3' },
  { bash: 'false' },
  { bash: 'echo out; echo err >&2; exit 2' },
  { bash: 'if then fi' },
  { bash: 'echo "unterminated' },
  { bash: 'mkdir -p sub/deeper && echo made' },
  { bash: 'cd sub' },
  { bash: 'pwd' },
  { bash: 'cd deeper; pwd' },
  { bash: 'cd ../..; pwd' },
  { bash: 'export SPILLWAY_FIDELITY=1; echo "set:$SPILLWAY_FIDELITY"' },
  { bash: 'echo "next:${SPILLWAY_FIDELITY-unset}"' },
  { bash: "cat <<'EOF'\nliteral $HOME `x`\n  indented\nEOF" },
  { bash: 'cat <<EOF\nsum=$((1+2))\nEOF' },
  { bash: "echo 'single quoted'; echo \"it's\"; printf '%s|%s\\n' \"a'b\" 'c\"d'" },
  { bash: "printf '\\000\\001\\377\\376binary\\n'" },
  { bash: "printf 'a\\r\\nb\\r\\n'" },
  { bash: "printf 'no newline'" },
  { bash: "echo 'héllo wörld ✓ 日本'" },
  { bash: 'cat; echo "cat-done:$?"' },
  { bash: 'read x; echo "read:$? [$x]"' },
  { bash: "printf 'one\\ntwo\\n' > in.txt && wc -l < in.txt" },
  { bash: 'while read -r l; do echo "got $l"; done < in.txt' },
  { bash: 'set -e; false; echo not-reached' },
  { bash: 'set -u; echo "$SPILLWAY_UNDEFINED_VARIABLE"; echo not-reached' },
  { bash: 'set -o pipefail; false | true; echo "pipe:$?"' },
  { bash: "trap 'echo trapped-exit' EXIT; echo body" },
  { bash: "trap 'echo trapped-int' INT; kill -INT $$; echo after-int" },
  { bash: "trap 'echo on-term; exit 7' TERM; kill -TERM $$; echo after-term" },
  { bash: 'exec echo replaced-by-exec' },
  { bash: 'exec 2>&1; ls /spillway-no-such-dir; echo "ls:$?"' },
  { bash: 'sleep 30 & echo "started job"' },
  { bash: '(sleep 0.3; echo late) & wait; echo waited' },
  { bash: 'echo before-kill; kill -9 $$' },
  { bash: 'kill -9 $$' },
  { bash: 'echo a; echo b >&2; echo c; echo d >&2' },
  { bash: 'seq 1 100 | tail -3' },
  { bash: 'for i in 1 2 3; do echo "n$i"; done' },
  { bash: "echo -e 'tab\\there'" },
  { bash: "yes abcdefg | head -c 4000" },
  { bash: '(exit 42)' },
  { bash: "sh -c 'echo in-sh; exit 5'" },
  { bash: 'echo "$0"' },
  { bash: 'echo "$SHLVL"' },
  { bash: 'echo "$-"' },
  { bash: 'umask; ulimit -n' },
  { bash: 'test -t 1 && echo tty || echo notty; test -t 0 && echo in-tty || echo in-notty' },
  { bash: 'type cd | head -1' },
  { bash: 'shopt extglob' },
  { bash: 'touch made.txt && ls' },
  { bash: 'rm -f made.txt' },
  { bash: 'rm -rf sub && echo removed' },
  { bash: 'nonexistent-command-spillway --flag' },
  { bash: LONG_LINE },
  { bash: 'echo "ready on port 3000"; sleep 12; echo stopping', background: true },
  { bash: 'sleep 2' },
  { readOutputOf: 55 }, // the background task's output while it runs
  { bash: 'echo partial-before-timeout; sleep 6; echo finished-after-timeout', timeout: 2000 },
  { bash: 'sleep 14' },
  { readOutputOf: 55 }, // after it ended
  { readOutputOf: 58 },
  { bash: 'echo last' },
];

interface Run {
  home: string;
  workDir: string;
  seen: string[];
  code: number | null;
  stderr: string;
}

async function runSteps(spillway: boolean): Promise<Run> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `spillway-fidelity-${spillway ? 'with' : 'without'}-`));
  const { configDir, workDir } = claudeDirs(home);
  fs.writeFileSync(path.join(configDir, 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(rm:*)'] } }, null, 2));
  if (spillway) {
    const install = spawnSync(process.execPath, [cli, 'hook', 'install', 'claude-code', '--user'], { encoding: 'utf8', env: { ...process.env, CLAUDE_CONFIG_DIR: configDir } });
    expect(install.status, install.stderr).toBe(0);
  }
  const outputFileOf = (req: MessagesRequest, n: number): string => /(\/\S+\.output)\b/.exec(toolResults(req)[n]?.text ?? '')?.[1] ?? '/nonexistent';
  const mock = await startMockAnthropic((req): MockReply => {
    if (!(req.tools ?? []).some((t) => t.name === 'Bash')) return { kind: 'text', text: 'ok' };
    const step = STEPS[toolResults(req).length];
    if (!step) return { kind: 'text', text: 'done' };
    if ('readOutputOf' in step) return { kind: 'tool_use', name: 'Read', input: { file_path: outputFileOf(req, step.readOutputOf) } };
    return { kind: 'tool_use', name: 'Bash', input: { command: step.bash, ...(step.background ? { run_in_background: true } : {}), ...(step.timeout ? { timeout: step.timeout } : {}) } };
  });
  try {
    const run = await runClaude({ bin: claudeBin, prompt: 'go', cwd: workDir, env: offlineClaudeEnv({ home, configDir, baseUrl: mock.url }) });
    return { home, workDir, seen: toolResults(mock.requests[mock.requests.length - 1]!).map((r) => r.text), code: run.code, stderr: run.stderr };
  } finally {
    await mock.close();
  }
}

/** What differs between any two runs: their temp folders (also dash-encoded, as Claude Code names its task folders), session and task ids. */
function normalise(text: string, run: Run): string {
  const dashed = run.home.replace(/[^A-Za-z0-9]/g, '-');
  return text
    .split(fs.realpathSync(run.home)).join('<HOME>')
    .split(run.home).join('<HOME>')
    .split(dashed).join('<HOME->')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<SESSION>')
    .replace(/\b(tasks\/|ID: |id: )[a-z0-9]{6,12}\b/g, '$1<TASK>');
}

let withSpillway: Run;
let without: Run;

beforeAll(async () => {
  if (!fs.existsSync(cli)) throw new Error('run `npm run build` first: dist/cli.js is missing');
  [withSpillway, without] = await Promise.all([runSteps(true), runSteps(false)]);
}, 400_000);

afterAll(() => {
  for (const run of [withSpillway, without]) if (run && !process.env.KEEP_E2E) fs.rmSync(run.home, { recursive: true, force: true });
});

describe(`Claude Code 2.1.332, ${STEPS.length} tricky calls with and without Spillway's shell prefix`, () => {
  it('both runs make every call and finish', () => {
    expect(STEPS.length).toBeGreaterThanOrEqual(50);
    expect(without.code, without.stderr.slice(-2000)).toBe(0);
    expect(withSpillway.code, withSpillway.stderr.slice(-2000)).toBe(0);
    expect(without.seen).toHaveLength(STEPS.length);
    expect(withSpillway.seen).toHaveLength(STEPS.length);
  });

  for (const [i, step] of STEPS.entries()) {
    const name = 'bash' in step ? step.bash.slice(0, 70).replace(/\n/g, '\\n') : `Read the output file of call ${step.readOutputOf + 1}`;
    const killsItsShell = 'bash' in step && step.bash.includes('kill -9 $$');
    it(`call ${i + 1}: ${name}${killsItsShell ? ' (known: the exit code of a shell killed by a signal)' : ''}`, () => {
      const expected = normalise(without.seen[i]!, without);
      if (killsItsShell) expect(expected).toMatch(/^Exit code 1\b/);
      expect(normalise(withSpillway.seen[i]!, withSpillway)).toBe(killsItsShell ? expected.replace(/^Exit code 1\b/, 'Exit code 137') : expected);
    });
  }

  it('reads a background task while it runs (live output) and after', () => {
    expect(withSpillway.seen[57]).toContain('ready on port 3000');
    expect(withSpillway.seen[57]).not.toContain('stopping');
    expect(withSpillway.seen[60]).toContain('stopping');
    expect(withSpillway.seen[61]).toContain('finished-after-timeout');
  });

  it('leaves no capture behind for outputs under the threshold', () => {
    const files = fs.readdirSync(withSpillway.home, { recursive: true, encoding: 'utf8' }).filter((f) => /spillway\/bash-/.test(f));
    expect(files).toEqual([]);
  });
});
