// The upload queue's lock: one holder at a time, a dead holder's lock taken over (even with its pid reused), never
// a live one's; the lock never read half written; release removes only one's own lock.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processStart } from '../../../src/common/process-state';
import { LOCK_NAME, takeQueueLock } from '../../../src/spill/remote/queue-lock';
import { tempDir } from './temp-dirs';

/** A pid that ran and has exited. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

describe('the upload queue lock', () => {
  it('is held by one taker at a time and names its holder by pid and start time', async () => {
    const dir = tempDir();
    const release = await takeQueueLock(dir);
    expect(release).toBeDefined();
    expect(readFileSync(path.join(dir, LOCK_NAME), 'utf8')).toBe(`${process.pid} ${processStart(process.pid)}\n`);
    expect(await takeQueueLock(dir)).toBeUndefined();
    await release!();
    expect(readdirSync(dir)).toEqual([]);
    const again = await takeQueueLock(dir);
    expect(again).toBeDefined();
    await again!();
  });

  it("is taken over from a holder that is gone, or whose pid now names another process", async () => {
    for (const holder of [`${deadPid()} 12345\n`, `${deadPid()}\n`, `${process.pid} 1\n`]) {
      const dir = tempDir();
      writeFileSync(path.join(dir, LOCK_NAME), holder);
      const release = await takeQueueLock(dir);
      expect(release, holder).toBeDefined();
      await release!();
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  it("is left to a live holder (another process, as the lock names it)", async () => {
    const dir = tempDir();
    const live = `${process.ppid} ${processStart(process.ppid)}\n`;
    writeFileSync(path.join(dir, LOCK_NAME), live);
    expect(await takeQueueLock(dir)).toBeUndefined();
    expect(readFileSync(path.join(dir, LOCK_NAME), 'utf8')).toBe(live);
  });

  it('goes to exactly one of many takers finding a stale lock at once', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, LOCK_NAME), `${deadPid()} 12345\n`);
    const got = await Promise.all(Array.from({ length: 16 }, () => takeQueueLock(dir)));
    expect(got.filter(Boolean)).toHaveLength(1);
    await got.find(Boolean)!();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("release leaves a lock that is not its own", async () => {
    const dir = tempDir();
    const release = await takeQueueLock(dir);
    const other = `${process.ppid} ${processStart(process.ppid)}\n`;
    writeFileSync(path.join(dir, LOCK_NAME), other);
    await release!();
    expect(readFileSync(path.join(dir, LOCK_NAME), 'utf8')).toBe(other);
  });
});
