// What `kill -9` leaves mid-spill (`.spillway-tmp-*` in the store's root) is
// listed as a partial spill of that folder, removed by `clean`, and never
// while its writer still runs; in a Claude Code session folder (the hook's
// store root) it is listed beside that session.
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { refusal } from '../../src/catalog/clean/clean';
import { PID_PLACE } from '../../src/spill/internal-files';
import { caseDirs, collect, hostileFile, run, spawnCli, write, type CaseDirs } from './helpers';

const { base } = hostileFile('killed-spill-leftovers');

type ListedSession = { key: string; source: string; id: string; dir: string; blobs: Array<{ path: string; kind: string; bytes: number }> };
interface ListJson {
  sessions: ListedSession[];
  /** Each folder's temps of spills killed mid-write, apart from the sessions' blobs. */
  partial: ListedSession[];
}

async function list(c: CaseDirs): Promise<ListJson> {
  const r = await run(['list', '--json'], { env: c.env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout.toString('utf8')) as ListJson;
}

const temps = async (dir: string): Promise<string[]> => (await fsp.readdir(dir)).filter((n) => n.startsWith('.spillway-tmp-')).map((n) => path.join(dir, n)).sort();

/** A spill stopped while it writes its blob: killed (SIGKILL) when `kill`, else left paused (returned, to kill later). */
async function stoppedSpill(c: CaseDirs, kill: boolean) {
  const child = spawnCli(['spill', '--session', 'hostile', '--tool', 'Bash'], { ...c.env, SPILLWAY_TEST_PAUSE: 'blob-write' });
  const paused = new Promise<void>((resolve) => child.stderr!.setEncoding('utf8').on('data', (d: string) => d.includes('spillway-paused') && resolve()));
  const done = collect(child, { input: 'x'.repeat(3_000_000), timeoutMs: 60_000 });
  await paused;
  if (kill) {
    child.kill('SIGKILL');
    await done;
  }
  return { child, done };
}

/** A pid that no process has now (a child that already exited). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' }).pid!;
}

describe('a spill killed mid-write', () => {
  it("leaves a temp that is listed as a partial spill and cleaned; a live writer's temp is neither listed nor deleted", async () => {
    const c = await caseDirs(base(), 'killed');
    await stoppedSpill(c, true);
    const [dead] = await temps(c.spills);
    expect(dead).toBeDefined();
    const writer = await stoppedSpill(c, false);
    try {
      const all = await temps(c.spills);
      expect(all).toHaveLength(2);
      // The dead writer's temp is listed, marked partial; the live writer's is a spill under way, not listed.
      const partial = (await list(c)).partial;
      expect(partial).toHaveLength(1);
      expect(partial[0]!.dir).toBe(c.spills);
      expect(partial[0]!.blobs.map((b) => [b.path, b.kind])).toEqual([[dead, 'partial']]);
      expect(partial[0]!.blobs[0]!.bytes).toBeGreaterThan(0);
      // Deletion itself refuses the live one (its writer runs), whatever a listing said.
      const live = all.find((p) => p !== dead)!;
      expect(await refusal(live, [c.spills])).toBe('a spill still being written (its writer runs)');
      expect(await refusal(dead!, [c.spills])).toBeUndefined();
      const byAge = await run(['clean', '--older-than', '0s', '--yes'], { env: c.env });
      expect(byAge.code, byAge.stderr).toBe(0);
      expect(await temps(c.spills)).toEqual([live]);
    } finally {
      writer.child.kill('SIGKILL');
      await writer.done;
    }
    // Its writer gone, the other temp is listed and goes with the next clean.
    const left = (await list(c)).partial[0]!;
    expect(left.blobs).toHaveLength(1);
    const again = await run(['clean', '--session', left.key, '--yes'], { env: c.env });
    expect(again.code, again.stderr).toBe(0);
    expect(await temps(c.spills)).toEqual([]);
    expect((await list(c)).partial).toEqual([]);
  });

  it("in a Claude Code session folder is listed there, for Claude Code, and cleaned", async () => {
    const c = await caseDirs(base(), 'claude-folder');
    const uuid = '1b2c3d4e-5f60-4a71-8b92-a3b4c5d6e7f8';
    const project = path.join(c.claudeProjects, '-home-dev-w');
    await write(path.join(project, `${uuid}.jsonl`), JSON.stringify({ type: 'user', sessionId: uuid, cwd: '/w', message: { content: 'hi' } }) + '\n');
    const blob = await write(path.join(project, uuid, 'tool-results', 'toolu_01.txt'), 'a whole blob\n');
    const temp = await write(path.join(project, uuid, `.spillway-tmp-${deadPid()}-at${PID_PLACE}-0123456789ab`), 'half of a bl');
    const { sessions, partial: [partial] } = await list(c);
    expect(sessions.map((s) => s.id)).toEqual([uuid]);
    expect(partial).toMatchObject({ source: 'claude-code', id: 'spillway-partial-spills', dir: path.join(project, uuid) });
    expect(partial!.blobs.map((b) => [b.path, b.kind])).toEqual([[temp, 'partial']]);
    expect(sessions.find((s) => s.id === uuid)!.blobs.map((b) => b.path)).toEqual([blob]);
    const clean = await run(['clean', '--session', partial!.key, '--yes'], { env: c.env });
    expect(clean.code, clean.stderr).toBe(0);
    await expect(fsp.lstat(temp)).rejects.toThrow();
    expect((await fsp.readFile(blob, 'utf8'))).toBe('a whole blob\n');
  });
});
