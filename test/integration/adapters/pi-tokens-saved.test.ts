// The catalog's tokens-saved figure against the difference measured on real
// pi 1.6 (SDK + faux provider): the same big bash outputs run with and without
// Spillway's pi extension; the tool results each request carried are summed,
// and `spillway turns --json` on the run with Spillway must come within 10%.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(__dirname, '../../..');
const driver = path.join(__dirname, 'pi-driver.mjs');

interface DriverReport {
  requests: Array<Array<{ toolCallId: string; text: string }>>;
  sessions: Array<{ file: string; dir: string; id: string }>;
  errors: string[];
  extensionErrors: string[];
  extensionPaths: string[];
}

let node22 = '';
const tmpDirs: string[] = [];

/** Big outputs of different shapes: long lines (pi's 50 KB cut binds), short ones (its 2,000 lines do), a failure. */
const COMMANDS = [
  'seq 1 40000 | sed "s/$/ compiled src\\/module.c with no warnings at -O2/"',
  'seq 1 300000',
  'seq 1 20000 | sed "s/$/ test case passed in 3ms (retries: 0)/"; echo "FAIL: 1 test failed"; exit 1',
  'for i in $(seq 1 3000); do echo "log record $i: the quick brown fox jumps over the lazy dog, again and again and again"; done',
  'seq 1 60000 | sed "s/^/row /"',
];

function runDriver(withSpillway: boolean): { report: DriverReport; tmp: string } {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `spillway-pi-tokens-${withSpillway ? 'on' : 'off'}-`));
  tmpDirs.push(tmp);
  const env = { ...process.env, TMPDIR: tmp, PI_DRIVER_COMMANDS: JSON.stringify(COMMANDS), ...(withSpillway ? {} : { PI_DRIVER_WITHOUT_SPILLWAY: '1' }) };
  const res = spawnSync(node22, [driver, 'tokens', tmp, repoRoot], { encoding: 'utf8', maxBuffer: 64 << 20, env });
  const report = JSON.parse(res.stdout.trim().split('\n').pop() ?? '') as DriverReport;
  expect(report.errors, res.stderr.slice(-4000)).toEqual([]);
  expect(report.extensionErrors).toEqual([]);
  expect(report.extensionPaths.includes(path.join(repoRoot, 'dist', 'pi-extension.mjs'))).toBe(withSpillway);
  return { report, tmp };
}

/** Chars of tool results the model was sent, over every request. */
const sentChars = (report: DriverReport): number => report.requests.flat().reduce((n, r) => n + r.text.length, 0);

beforeAll(() => {
  if (!fs.existsSync(path.join(repoRoot, 'dist', 'pi-extension.mjs'))) throw new Error('run `npm run build` first: dist/pi-extension.mjs is missing');
  node22 = (JSON.parse(execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'ensure-pi.mjs')], { encoding: 'utf8' })) as { node: string }).node;
});

afterAll(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('tokens saved on real pi', () => {
  it('is within 10% of the difference in what the model was sent with and without Spillway', () => {
    const on = runDriver(true);
    const off = runDriver(false);
    expect(on.report.requests).toHaveLength(COMMANDS.length + 1);
    expect(off.report.requests).toHaveLength(COMMANDS.length + 1);
    // Without Spillway the model saw pi's tails; with it, Spillway's digests.
    const measured = Math.round((sentChars(off.report) - sentChars(on.report)) / 4);
    expect(measured).toBeGreaterThan(20_000);

    const s = on.report.sessions[0]!;
    const home = fs.mkdtempSync(path.join(on.tmp, 'home-'));
    const res = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'turns', s.id, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, HOME: home, TMPDIR: on.tmp, PI_CODING_AGENT_SESSION_DIR: path.dirname(s.dir) },
    });
    expect(res.status, res.stderr).toBe(0);
    const turns = JSON.parse(res.stdout) as { tokensSaved: { tokens: number; agentSpills: number; blobs: Array<{ counted: boolean }> }; blobs: Array<{ madeBy: string; turn?: number }> };
    // Every big output is pi's log whose tail Spillway replaced: each one counted, at its own turn.
    expect(turns.blobs.map((b) => [b.madeBy, b.turn])).toEqual(COMMANDS.map((_, i) => ['spillway', i + 1]));
    expect(turns.tokensSaved.agentSpills).toBe(0);
    const figure = turns.tokensSaved.tokens;
    if (process.env.SPILLWAY_PRINT_FIGURES) console.log(`pi tokens saved: catalog ${figure}, measured ${measured}`);
    expect(Math.abs(figure - measured) / measured, `catalog ${figure} vs measured ${measured}`).toBeLessThanOrEqual(0.1);
  });
});
