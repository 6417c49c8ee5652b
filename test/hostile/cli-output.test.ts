// What the CLI prints: names, titles and blob lines never drive the terminal,
// a reader that goes away ends the command quietly, show prints the file's own
// bytes, and usage errors say what is wrong where errors go.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseDirs, collect, hostileFile, run, spawnCli, spillwaySession, TERMINAL_CONTROL, write, type CaseDirs } from './helpers';

const { base } = hostileFile('cli-output');

const UUID = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const FAKE_LINE = 'spillway  fake-session  injected';

/** A Claude Code session whose title, cwd, tool arguments, file names and lines carry terminal controls. */
async function hostileNames(c: CaseDirs): Promise<void> {
  const project = path.join(c.claudeProjects, '-home-dev-w');
  const lines = [
    { type: 'user', sessionId: UUID, cwd: '/w\x1b]8;;http://evil.example\x07click\x1b]8;;\x07', message: { content: 'prompt' } },
    { type: 'custom-title', customTitle: `clear\x1b[2J\x1b[H title\n${FAKE_LINE}\u202egnp.exe` },
    { type: 'assistant', message: { id: 'm1', content: [{ type: 'tool_use', id: 'toolu_01', name: 'Bash\x1b[31m', input: { command: 'ls\x1b[8m hidden\r' } }] } },
  ];
  await write(path.join(project, `${UUID}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const results = path.join(project, UUID, 'tool-results');
  await write(path.join(results, 'toolu_01.txt'), 'MATCHME \x1b]0;window title\x07 \x1b[2J \x9b31m \u202e end\n');
  await write(path.join(results, `evil\x1b[2Jname\nfake.txt`), 'MATCHME in a file with a hostile name\n');
}

function expectInert(text: string): void {
  expect(text).not.toMatch(TERMINAL_CONTROL);
  expect(text.split('\n')).not.toContain(FAKE_LINE);
}

describe('terminal controls in names, titles and lines', () => {
  it('are escaped by list, grep, clean and turns', async () => {
    const c = await caseDirs(base(), 'terminal');
    await hostileNames(c);
    const runs = await Promise.all([
      run(['list'], { env: c.env }),
      run(['grep', 'MATCHME', '--engine', 'node'], { env: c.env }),
      run(['clean', '--older-than', '0s'], { env: c.env }),
      run(['turns', UUID], { env: c.env }),
    ]);
    for (const r of runs) {
      expect(r.timedOut).toBe(false);
      expectInert(r.stdout.toString('utf8'));
      expectInert(r.stderr);
    }
    expect(runs[1]!.stdout.toString('utf8')).toContain('MATCHME'); // the lines are still there, escaped
  });

  it('in a path or pattern named on the command line are escaped in errors', async () => {
    const c = await caseDirs(base(), 'terminal-args');
    for (const args of [['show', '/nonexistent/\x1b[2Jx'], ['grep', '(\x1b[2J', '--regex', '--engine', 'node'], ['clean', '--session', '\x1b[2J']]) {
      const r = await run(args, { env: c.env });
      expectInert(r.stderr);
    }
  });
});

describe('a reader that goes away (EPIPE)', () => {
  it('ends list, show and spill quietly', async () => {
    const c = await caseDirs(base(), 'epipe');
    const names = Array.from({ length: 3000 }, (_, i) => `blob-${i}-${'n'.repeat(60)}.txt`);
    await spillwaySession(path.join(c.spills, 'session-many'), 'many', names);
    const big = await write(path.join(c.dir, 'big.txt'), 'line of a big blob\n'.repeat(200_000));
    const cases: Array<{ args: string[]; input?: string }> = [
      { args: ['list'] },
      { args: ['show', big] },
      { args: ['spill', '--session', 's', '--tool', 'Read'], input: 'read output line\n'.repeat(200_000) },
    ];
    for (const { args, input } of cases) {
      const child = spawnCli(args, c.env);
      child.stdout!.once('data', () => child.stdout!.destroy());
      const r = await collect(child, { input, timeoutMs: 30_000 });
      expect(r.timedOut).toBe(false);
      expect(r.stderr, args[0]).not.toMatch(/EPIPE|Error|\n\s+at /);
      expect(r.code, args[0]).toBe(0);
    }
  });
});

describe('show', () => {
  it('prints the file\'s own bytes, invalid UTF-8 included, whole or by lines', async () => {
    const c = await caseDirs(base(), 'show-bytes');
    const bytes = Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0x0a, 0xc3, 0x28, 0x0a]);
    const file = await write(path.join(c.dir, 'raw.bin'), bytes);
    expect((await run(['show', file], { env: c.env })).stdout.equals(bytes)).toBe(true);
    expect((await run(['show', file, '--lines', '1:2'], { env: c.env })).stdout.equals(bytes)).toBe(true);
  });

  it('rejects a line number past what it can count, saying so', async () => {
    const c = await caseDirs(base(), 'show-overflow');
    const file = await write(path.join(c.dir, 'a.txt'), 'a\n');
    for (const lines of ['99999999999999999999:', '1:99999999999999999999', '99999999999999999999']) {
      const r = await run(['show', file, '--lines', lines], { env: c.env });
      expect(r.code).toBe(2);
      expect(r.stderr).not.toContain('A <= B');
      expect(r.stderr).toContain('--lines');
    }
  });
});

describe('usage', () => {
  it('with no arguments goes to stderr, exit 2', async () => {
    const c = await caseDirs(base(), 'usage');
    const r = await run([], { env: c.env });
    expect(r.code).toBe(2);
    expect(r.stdout.length).toBe(0);
    expect(r.stderr).toContain('usage: spillway');
  });
});

