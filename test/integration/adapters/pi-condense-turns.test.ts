// `spillway turns --json` on a real pi 1.6 session (SDK + faux provider) with a
// pi-condense-style extension that writes its own records (index, summary
// message, flush metrics) and prunes each request: every prune and the
// compaction are named at the turn whose prompt shrank, none "unexplained", and
// the blob fetched back by context_tree_query counts as read back there.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(__dirname, '../../..');
const driver = path.join(__dirname, 'pi-driver.mjs');
let node22 = '';
let tmp = '';

interface DriverReport {
  requests: Array<Array<{ toolCallId: string; text: string }>>;
  sessions: Array<{ file: string; dir: string; id: string }>;
  errors: string[];
  extensionErrors: string[];
  condense?: Array<{ ids: string[]; withSummary: boolean }>;
}

interface TurnsJson {
  points: Array<{ index: number; promptTokens: number; delta: number; compaction: boolean; drop: null | { kind: string; tokens: number } }>;
  blobs: Array<{ path: string; toolCallId?: string; turn?: number; readBack: number; reads?: Array<{ turn: number; toolCallId: string; tokens?: number }> }>;
}

beforeAll(() => {
  node22 = (JSON.parse(execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'ensure-pi.mjs')], { encoding: 'utf8' })) as { node: string }).node;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-pi-condense-'));
});
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('a real pi session with pi-condense-style records', () => {
  it('names its prunes and its compaction at their turns in `turns --json`, and the query that read a blob back', () => {
    const res = spawnSync(node22, [driver, 'condense', tmp, repoRoot], { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, TMPDIR: tmp, PI_DRIVER_WITHOUT_SPILLWAY: '1' } });
    const report = JSON.parse(res.stdout.trim().split('\n').pop() ?? '') as DriverReport;
    expect(report.errors, res.stderr.slice(-4000)).toEqual([]);
    expect(report.extensionErrors).toEqual([]);
    expect(report.condense).toEqual([
      { ids: ['call_big_a'], withSummary: true },
      { ids: ['call_big_b'], withSummary: false },
    ]);
    const s = report.sessions[0]!;
    const cli = spawnSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'turns', s.id, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, HOME: path.join(tmp, 'home'), TMPDIR: tmp, PI_CODING_AGENT_SESSION_DIR: path.dirname(s.dir) },
    });
    expect(cli.status, cli.stderr).toBe(0);
    const turns = JSON.parse(cli.stdout) as TurnsJson;
    // What the model was sent: the requests in order (the driver saw each one), one point each.
    const shrank = turns.points.filter((p) => p.delta < 0);
    expect(shrank.length).toBeGreaterThanOrEqual(3);
    expect(turns.points.filter((p) => p.drop?.kind === 'unexplained')).toEqual([]);
    // The first prune: the request after the turn that flushed the big alpha output (its 80 KB gone).
    const firstPrune = turns.points.find((p) => p.drop?.kind === 'pi-condense-prune')!;
    expect(firstPrune.index).toBe(3);
    expect(firstPrune.drop!.tokens).toBeGreaterThan(15_000);
    expect(turns.points.find((p) => p.compaction)!.drop!.kind).toBe('compaction');
    // The second prune, recorded by its flush metrics alone, after the compaction.
    const prunes = turns.points.filter((p) => p.drop?.kind === 'pi-condense-prune');
    expect(prunes).toHaveLength(2);
    expect(prunes[1]!.index).toBeGreaterThan(turns.points.find((p) => p.compaction)!.index);
    expect(prunes[1]!.drop!.tokens).toBeGreaterThan(10_000);
    // The alpha blob, made in turn 1, fetched back by its short ref t1 by the query's call.
    const alpha = turns.blobs.find((b) => b.toolCallId === 'call_big_a')!;
    expect(alpha.turn).toBe(1);
    expect(alpha.readBack).toBe(1);
    const queryTurn = turns.points.length - 1; // the call that issued the query; the last call answered "done 1"
    expect(alpha.reads).toEqual([{ turn: queryTurn, toolCallId: 'call_query', tokens: expect.any(Number) }]);
    expect(alpha.reads![0]!.tokens).toBeGreaterThan(5_000);
  });
});
