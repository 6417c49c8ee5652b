// Spillway's pi extension on REAL pi (SDK + faux provider), run on Node 22 as
// a child process (pi needs >= 22.19; vitest runs on the machine's Node).
// The extension is loaded from the built package (`npm run build` first),
// through package.json "pi.extensions", as a user's pi would load it.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/spill/manifest';

const repoRoot = path.resolve(__dirname, '../../..');
const driver = path.join(__dirname, 'pi-driver.mjs');

interface SeenResult {
  toolCallId: string;
  toolName: string;
  text: string;
}
interface DriverReport {
  scenario: string;
  requests: SeenResult[][];
  sessions: Array<{ file: string; dir: string; id: string }>;
  resolved: Array<{ toolCallId: string; spillPath?: string; exists: boolean }>;
  errors: string[];
  extensionErrors: string[];
  extensionPaths: string[];
  usage?: Array<number | null>;
}

let node22 = '';
const tmpDirs: string[] = [];

function runDriver(scenario: string): { report: DriverReport; tmp: string } {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `spillway-pi-${scenario}-`));
  tmpDirs.push(tmp);
  const res = spawnSync(node22, [driver, scenario, tmp, repoRoot], { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, TMPDIR: tmp } });
  const last = res.stdout.trim().split('\n').pop() ?? '';
  let report: DriverReport;
  try {
    report = JSON.parse(last) as DriverReport;
  } catch {
    throw new Error(`pi driver printed no report (exit ${res.status}):\n${res.stderr.slice(-4000)}`);
  }
  expect(report.errors, res.stderr.slice(-4000)).toEqual([]);
  expect(report.extensionErrors).toEqual([]);
  expect(report.extensionPaths).toContain(path.join(repoRoot, 'dist', 'pi-extension.mjs'));
  return { report, tmp };
}

/** The text the model was sent for one tool call in the last request that held it. */
function lastSeen(report: DriverReport, toolCallId: string): string {
  for (let i = report.requests.length - 1; i >= 0; i--) {
    const hit = report.requests[i]!.find((r) => r.toolCallId === toolCallId);
    if (hit) return hit.text;
  }
  throw new Error(`no request carried ${toolCallId}`);
}

/** Entries of a pi session file (JSONL). */
function sessionEntries(file: string): Array<Record<string, any>> {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, any>);
}

beforeAll(() => {
  if (!fs.existsSync(path.join(repoRoot, 'dist', 'pi-extension.mjs'))) throw new Error('run `npm run build` first: dist/pi-extension.mjs is missing');
  // pi runs on Node 22 from its own install in .cache/pi (npm test installs it first).
  node22 = (JSON.parse(execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'ensure-pi.mjs')], { encoding: 'utf8' })) as { node: string }).node;
});

afterAll(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('pi extension: eager spill', () => {
  let report: DriverReport;
  let sessionFile: string;
  let blobDir: string;

  let piTmp: string;

  beforeAll(() => {
    ({ report, tmp: piTmp } = runDriver('eager'));
    const s = report.sessions[0]!;
    sessionFile = s.file;
    blobDir = path.join(s.dir, `${s.id}-blobs`);
  });

  it('writes the full body of an oversized custom-tool result to a private blob beside the session', () => {
    const rec = report.resolved.find((r) => r.toolCallId === 'call_big_1')!;
    expect(rec.spillPath).toBeDefined();
    expect(path.dirname(rec.spillPath!)).toBe(blobDir);
    const body = fs.readFileSync(rec.spillPath!, 'utf8');
    expect(body.length).toBeGreaterThanOrEqual(100_000);
    expect(body.startsWith('alpha line 1 of the big tool output\n')).toBe(true);
    expect(body).toContain('FATAL: alpha exploded near the end');
    expect(fs.statSync(rec.spillPath!).mode & 0o777).toBe(0o600);
    expect(fs.statSync(blobDir).mode & 0o777).toBe(0o700);
  });

  it('sends the model the stub (tool, args, size, path, hint, preview with the tail) instead of the body', () => {
    const seen = lastSeen(report, 'call_big_1');
    const rec = report.resolved.find((r) => r.toolCallId === 'call_big_1')!;
    expect(seen.length).toBeLessThan(2_000);
    expect(seen).toMatch(/^\[spillway\] big \(/);
    expect(seen).toMatch(/returned 100,\d{3} bytes, 2,\d{3} lines/);
    expect(seen).toContain(rec.spillPath!);
    expect(seen).toContain('offset/limit');
    expect(seen).toContain('alpha line 1 of the big tool output');
    expect(seen).toContain('FATAL: alpha exploded near the end');
    expect(seen).not.toContain('alpha line 1000 of the big tool output');
  });

  it('keeps the body out of the session file, including pi bash truncation.content', () => {
    const text = fs.readFileSync(sessionFile, 'utf8');
    expect(text).not.toContain('alpha line 1000 of the big tool output');
    // Line 198500 of `seq 1 200000` is inside pi's own 2000-line tail copy but
    // not in our preview: it must be nowhere in the file.
    expect(text).not.toContain('198500');
    const bashResult = sessionEntries(sessionFile).find((e) => e.type === 'message' && e.message?.toolCallId === 'call_bash_1')!;
    expect(bashResult.message.details.truncation.truncated).toBe(true);
    expect(bashResult.message.details.truncation).not.toHaveProperty('content');
    expect(bashResult.message.content[0].text).toMatch(/^\[spillway\] bash \(seq 1 200000/);
  });

  it('points the model at pi bash own full-output file (no copy), keeping the tail and the failure line', () => {
    const rec = report.resolved.find((r) => r.toolCallId === 'call_bash_1')!;
    // pi's own log, named by the result's details.fullOutputPath: referenced, not stored a second time.
    expect(path.basename(rec.spillPath!)).toMatch(/^pi-bash-[0-9a-f]+\.log$/);
    const body = fs.readFileSync(rec.spillPath!, 'utf8');
    expect(body.startsWith('1\n2\n3\n')).toBe(true);
    expect(body.trimEnd().endsWith('200000\nFATAL: bash exploded')).toBe(true);
    expect(fs.readdirSync(blobDir).some((f) => fs.readFileSync(path.join(blobDir, f), 'utf8').includes('\n198500\n'))).toBe(false);
    const seen = lastSeen(report, 'call_bash_1');
    expect(seen).toContain('FATAL: bash exploded');
    expect(seen).toContain('1,288,916 bytes');
    expect(seen).toContain(rec.spillPath!);
  });

  it('digests a failing bash command like a passing one and keeps pi exit status line', () => {
    const seen = lastSeen(report, 'call_bash_fail');
    expect(seen).toMatch(/^\[spillway\] bash \(seq 1 100000/);
    expect(seen).toContain('error: undefined reference to main_loop');
    expect(seen).toContain('0 failed, retrying (attempt 2)');
    expect(seen.trimEnd().endsWith('Command exited with code 2')).toBe(true);
    expect(seen.length).toBeLessThan(2_500);
    const rec = report.resolved.find((r) => r.toolCallId === 'call_bash_fail')!;
    expect(fs.readFileSync(rec.spillPath!, 'utf8')).toContain('error: undefined reference to main_loop\n100001 compiled ok');
    const result = sessionEntries(sessionFile).find((e) => e.type === 'message' && e.message?.toolCallId === 'call_bash_fail')!;
    expect(result.message.isError).toBe(true);
  });

  it('leaves a small failing command exactly as pi returned it', () => {
    // pi's own text: the output (with its newline), a blank line, the status.
    expect(lastSeen(report, 'call_bash_small_fail')).toBe('tiny failure\n\n\nCommand exited with code 3');
  });

  it("leaves a result alone when pi's log of it is under the threshold, or when its text only names a log", () => {
    expect(lastSeen(report, 'call_bash_short_lines')).not.toContain('[spillway]');
    expect(lastSeen(report, 'call_bash_echo_notice')).toBe(`hit: [Showing lines 1-5 of 9. Full output: ${path.join(piTmp, 'elsewhere', 'pi-bash-0123abcd.log')}]\n`);
  });

  it('aliases an identical later result to the same blob (no second write)', async () => {
    const first = report.resolved.find((r) => r.toolCallId === 'call_big_1')!;
    const dup = report.resolved.find((r) => r.toolCallId === 'call_big_2')!;
    expect(dup.spillPath).toBe(first.spillPath);
    expect(lastSeen(report, 'call_big_2')).toContain('identical to an earlier result');
    const blobs = fs.readdirSync(blobDir).filter((f) => f !== 'spillway.jsonl');
    expect(blobs).toHaveLength(1); // the alpha body; nothing for the duplicates, nothing for pi's own logs
    const { records } = await readManifest(blobDir);
    expect(records.find((r) => r.toolCallId === 'call_big_2')?.aliasOf).toBe(path.basename(first.spillPath!));
  });

  it('leaves results under the threshold byte-identical', () => {
    const seen = lastSeen(report, 'call_small_1');
    expect(seen.startsWith('small line 1 of the big tool output\n')).toBe(true);
    expect(seen).not.toContain('[spillway]');
  });

  it('resolves every spill after the session is reopened, and dedups against blobs from before', async () => {
    expect(report.sessions[1]!.file).toBe(sessionFile);
    const resolvedIds = report.resolved.map((r) => r.toolCallId);
    expect(resolvedIds).toEqual(expect.arrayContaining(['call_big_1', 'call_big_2', 'call_bash_1']));
    expect(report.resolved.every((r) => r.exists)).toBe(true);
    // The reopened session's first request still carries the stubs.
    const firstAfterReopen = report.requests.find((req) => req.some((r) => r.toolCallId === 'call_big_3'))!;
    expect(firstAfterReopen.find((r) => r.toolCallId === 'call_big_1')!.text).toMatch(/^\[spillway\]/);
    expect(lastSeen(report, 'call_big_3')).toContain('identical to an earlier result');
    const { records } = await readManifest(blobDir);
    expect(records.find((r) => r.toolCallId === 'call_big_3')?.aliasOf).toBeDefined();
    expect(fs.readdirSync(blobDir).filter((f) => f !== 'spillway.jsonl')).toHaveLength(1);
  });

  it('shows the blobs with their tool names in `spillway list --json`', () => {
    const s = report.sessions[0]!;
    // pi's default roots, as a user has them: its sessions folder and TMPDIR (where pi's own logs are).
    const home = fs.mkdtempSync(path.join(piTmp, 'home-'));
    const res = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'list', '--json', '--source', 'pi'], {
      encoding: 'utf8',
      env: { ...process.env, HOME: home, TMPDIR: piTmp, PI_CODING_AGENT_SESSION_DIR: path.dirname(s.dir) },
    });
    expect(res.status, res.stderr).toBe(0);
    const listed = JSON.parse(res.stdout) as { sessions: Array<{ id: string; blobs: Array<{ path: string; tool: string | null; toolCallId: string | null }> }> };
    const session = listed.sessions.find((x) => x.id === s.id)!;
    // Each output once: the blob Spillway wrote, and pi's own logs (not copied, so not listed twice; the
    // short-lines one too, which pi wrote though Spillway left its result alone).
    expect(session.blobs.map((b) => [b.toolCallId, b.tool]).sort()).toEqual([
      ['call_bash_1', 'bash'],
      ['call_bash_fail', 'bash'],
      ['call_bash_short_lines', 'bash'],
      ['call_big_1', 'big'],
    ]);
    // ...and in no other session (pi's unattached-logs fallback included).
    const everywhere = listed.sessions.flatMap((x) => x.blobs.map((b) => b.path));
    expect(new Set(everywhere).size).toBe(everywhere.length);
  });

  it('records each spill in the session as a custom index entry, never with the full body', () => {
    const index = sessionEntries(sessionFile).filter((e) => e.type === 'custom' && e.customType === 'spillway-spill');
    expect(index.map((e) => e.data.toolCallId)).toEqual(['call_big_1', 'call_big_2', 'call_bash_1', 'call_bash_fail', 'call_big_3']);
    for (const e of index) {
      expect(e.data.spillBytes).toBeGreaterThan(20_000);
      expect(e.data.contentHash).toMatch(/^[0-9a-f]{64}$/);
      expect(e.data.resultPreview.length).toBeLessThanOrEqual(1_024);
    }
  });
});

describe('pi extension: budget-delta flush', () => {
  it('fires when one turn adds at least budgetTurnDelta of the window, not below, and edits that turn durably', () => {
    const { report } = runDriver('delta');
    const s = report.sessions[0]!;
    const entries = sessionEntries(s.file);
    const idOf = (toolCallId: string) => entries.find((e) => e.type === 'message' && e.message?.toolCallId === toolCallId)!.id as string;
    const edits = entries.filter((e) => e.type === 'context_edit');
    // t0 (first turn, no previous) and t1 (small delta) stay; t2 (+30% of the window) is spilled.
    expect(edits.map((e) => e.targetId)).toEqual([idOf('call_t2')]);
    expect(edits[0]!.replacement.content[0].text).toMatch(/^\[spillway\] big \(/);
    expect(lastSeen(report, 'call_t0')).toMatch(/^t0 line 1 /);
    expect(lastSeen(report, 'call_t1')).toMatch(/^t1 line 1 /);
    expect(lastSeen(report, 'call_t2')).toMatch(/^\[spillway\] big/);
    const index = entries.filter((e) => e.type === 'custom' && e.customType === 'spillway-spill');
    expect(index.map((e) => [e.data.toolCallId, e.data.trigger])).toEqual([['call_t2', 'budget-delta']]);
    const body = fs.readFileSync(index[0]!.data.spillPath, 'utf8');
    expect(body.length).toBeGreaterThanOrEqual(60_000);
    expect(body).toContain('FATAL: t2 exploded near the end');
    // After reopening, the first turn has no previous fraction: +60k chars stays.
    expect(report.sessions[1]!.file).toBe(s.file);
    expect(lastSeen(report, 'call_t3')).toMatch(/^t3 line 1 /);
    const after = sessionEntries(s.file).filter((e) => e.type === 'context_edit');
    expect(after).toHaveLength(1);
  });

  it('neither fires nor forgets the previous fraction on a null-token turn', () => {
    const { report } = runDriver('null-token');
    const s = report.sessions[0]!;
    const entries = sessionEntries(s.file);
    expect(entries.some((e) => e.type === 'compaction')).toBe(true);
    // The turn after the compaction reported no usage: pi says tokens: null.
    expect(report.usage).toContain(null);
    const index = entries.filter((e) => e.type === 'custom' && e.customType === 'spillway-spill');
    // t1 (+60k chars) came on the null-token turn: no flush then. The next turn
    // compares against the fraction from before the null turn, so it fires and
    // spills its own result (t2); t1 was not that turn's result.
    expect(index.map((e) => [e.data.toolCallId, e.data.trigger])).toEqual([['call_t2', 'budget-delta']]);
    expect(lastSeen(report, 'call_t1')).toMatch(/^t1 line 1 /);
  });
});

describe('pi extension: parallel tool calls', () => {
  it('writes one blob for two identical results that arrive at once; the second aliases it', async () => {
    const { report } = runDriver('parallel');
    const s = report.sessions[0]!;
    const blobDir = path.join(s.dir, `${s.id}-blobs`);
    const index = sessionEntries(s.file).filter((e) => e.type === 'custom' && e.customType === 'spillway-spill');
    expect(index.map((e) => e.data.toolCallId).sort()).toEqual(['call_twin_1', 'call_twin_2']);
    expect(index[0]!.data.spillPath).toBe(index[1]!.data.spillPath);
    expect(index.map((e) => e.data.aliased).sort()).toEqual([false, true]);
    expect(fs.readdirSync(blobDir).filter((f) => f !== 'spillway.jsonl')).toEqual([path.basename(index[0]!.data.spillPath)]);
    const { records } = await readManifest(blobDir);
    expect(records.filter((r) => r.aliasOf === undefined)).toHaveLength(1);
    expect(records.filter((r) => r.aliasOf === path.basename(index[0]!.data.spillPath))).toHaveLength(1);
    // Both results reached the model as stubs naming the one file.
    for (const id of ['call_twin_1', 'call_twin_2']) expect(lastSeen(report, id)).toContain(index[0]!.data.spillPath);
  });
});
