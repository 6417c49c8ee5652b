// Tokens saved counts what Spillway changed, against what the agent alone
// would have sent: pi's tail cut (2,000 lines / 50 KB) of a bash log whose
// shown tail Spillway replaced with its digest, Claude Code's cut of a failure.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { baselineChars } from '../../../src/catalog/turns/turns';

let dir: string;
let catalog: Catalog | undefined;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tokens-saved-'));
});
afterEach(async () => {
  await catalog?.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('the baseline: what the agent alone would have sent', () => {
  it("is pi's 2,000 lines or 50 KB, whichever is less, and Claude Code's failure cut", () => {
    expect(baselineChars('pi', 200_000, { lines: 10_000 })).toBe(40_000); // 2,000 lines of 20 chars
    expect(baselineChars('pi', 400_000, { lines: 4_000 })).toBe(50 * 1024); // 2,000 lines of 100 chars: the byte cap first
    expect(baselineChars('pi', 30_000, { lines: 100 })).toBe(30_000); // under both: whole
    expect(baselineChars('claude-code', 80_000, { failed: true })).toBe(10_040);
    expect(baselineChars('claude-code', 8_000, { failed: true })).toBe(8_000);
    expect(baselineChars('claude-code', 80_000)).toBe(2_300);
  });
});

describe("a pi bash log whose tail Spillway replaced", () => {
  const at = (n: number) => new Date(Date.UTC(2026, 4, 2, 0, 0, n)).toISOString();
  const usage = (input: number) => ({ input, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: input + 10 });

  async function session(replaced: boolean) {
    const agentDir = path.join(dir, 'pi-agent');
    const tmp = path.join(dir, 'tmp');
    const sessions = path.join(agentDir, 'sessions', '--home-dev-w--');
    await fsp.mkdir(sessions, { recursive: true });
    await fsp.mkdir(tmp, { recursive: true });
    const log = path.join(tmp, 'pi-bash-00112233aabbccdd.log');
    const lines = 5_000;
    await fsp.writeFile(log, 'build step output line of forty chars.\n'.repeat(lines)); // 39 chars a line
    const digest = 'x'.repeat(2_300);
    const entries = [
      { type: 'session', version: 3, id: 'eeee5555', cwd: '/home/dev/w', timestamp: at(0) },
      { type: 'message', id: 'u1', timestamp: at(1), message: { role: 'user', content: 'build' } },
      { type: 'message', id: 'a1', timestamp: at(2), message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'bash', arguments: { command: 'make' } }], usage: usage(1000) } },
      ...(replaced ? [{ type: 'custom', id: 'x1', timestamp: at(3), customType: 'spillway-spill', data: { v: 1, toolCallId: 'c1', toolName: 'bash', spillPath: log, spillBytes: 39 * lines, spillLines: lines, external: true, trigger: 'eager' } }] : []),
      { type: 'message', id: 'r1', timestamp: at(4), message: { role: 'toolResult', toolCallId: 'c1', toolName: 'bash', content: [{ type: 'text', text: replaced ? digest : 'y'.repeat(50 * 1024) }], details: { fullOutputPath: log, truncation: { truncated: true } }, isError: false } },
      { type: 'message', id: 'a2', timestamp: at(5), message: { role: 'assistant', content: [], usage: usage(1700) } },
      { type: 'message', id: 'a3', timestamp: at(6), message: { role: 'assistant', content: [], usage: usage(1800) } },
    ];
    await fsp.writeFile(path.join(sessions, '2026-05-02T00-00-00-000Z_eeee5555.jsonl'), entries.map((e) => JSON.stringify(e)).join('\n') + '\n');
    catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), PI_CODING_AGENT_DIR: agentDir, TMPDIR: tmp }, sources: ['pi'] });
    await catalog.scan();
    const info = catalog.findSessions('eeee5555')[0]!;
    return { log, info, series: (await catalog.turnsFor(info.key))! };
  }

  it('counts the tail pi would have shown less the digest, on every call after', async () => {
    const { log, info, series } = await session(true);
    expect(info.blobs.find((b) => b.path === log)).toMatchObject({ madeBy: 'spillway', turn: 1 });
    const saved = series.tokensSaved;
    // pi alone: the last 2,000 lines of 39 chars (78,000 chars, over 50 KB: 51,200), 12,800 tokens; the digest 575.
    expect(saved.blobs).toEqual([expect.objectContaining({ counted: true, baselineTokens: 12_800, digestTokens: 575, resentTurns: 2, saved: (12_800 - 575) * 2 })]);
    expect([saved.tokens, saved.agentSpills, saved.calls]).toEqual([(12_800 - 575) * 2, 0, 2]);
    expect(series.blobs.find((b) => b.path === log)!.madeBy).toBe('spillway');
  });

  it("counts nothing for a log whose tail pi showed as it cut it", async () => {
    const { series } = await session(false);
    expect([series.tokensSaved.tokens, series.tokensSaved.agentSpills]).toEqual([0, 1]);
  });
});
