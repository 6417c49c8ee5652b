// One uploader drains a queue at a time. The lock file names its holder by pid and start time, so a lock left
// by a process killed with -9 is taken over even when its pid has been reused since. It appears whole or not at
// all (written beside it, then linked into place), so a rival never reads it half written.
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { processStart, processState } from '../../common/process-state';

export const LOCK_NAME = 'uploader.lock';

/** Takes the queue's lock: a release function, or undefined while a live uploader holds it. */
export async function takeQueueLock(dir: string): Promise<(() => Promise<void>) | undefined> {
  const file = path.join(dir, LOCK_NAME);
  const mine = holderText(process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await linkInPlace(dir, file, mine)) return () => releaseIfMine(file, mine);
    const holder = await fsp.readFile(file, 'utf8').catch(() => undefined);
    if (holder === undefined) continue; // released meanwhile
    if (holds(holder)) return undefined;
    // A dead holder's lock: moved aside first, so that of two uploaders finding it only one removes it.
    const aside = path.join(dir, `.stale-${randomBytes(6).toString('hex')}`);
    if (!(await fsp.rename(file, aside).then(() => true, () => false))) continue;
    const moved = await fsp.readFile(aside, 'utf8').catch(() => undefined);
    if (moved !== holder) {
      // A rival took the stale lock over between the read and the move: its lock goes back.
      await fsp.link(aside, file).catch(() => undefined);
      await fsp.rm(aside, { force: true });
      return undefined;
    }
    await fsp.rm(aside, { force: true });
  }
  return undefined;
}

function holderText(pid: number): string {
  return `${pid} ${processStart(pid) ?? ''}\n`;
}

/** Whether the process a lock names still runs (the same process: same pid, same start time). */
function holds(text: string): boolean {
  const [pidText, start] = text.trim().split(' ');
  const pid = Number(pidText);
  if (processState(pid) === 'gone') return false;
  if (!start) return true;
  const now = processStart(pid);
  return now === undefined || now === start;
}

/** The lock written to a private file of its own, then linked to its name: EEXIST when another holds it. */
async function linkInPlace(dir: string, file: string, text: string): Promise<boolean> {
  const temp = path.join(dir, `.lock-${randomBytes(6).toString('hex')}`);
  await fsp.writeFile(temp, text, { flag: 'wx', mode: 0o600 });
  try {
    await fsp.link(temp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  } finally {
    await fsp.rm(temp, { force: true });
  }
}

async function releaseIfMine(file: string, mine: string): Promise<void> {
  if ((await fsp.readFile(file, 'utf8').catch(() => undefined)) === mine) await fsp.rm(file, { force: true });
}
