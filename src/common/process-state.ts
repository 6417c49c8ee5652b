import { readdirSync, readFileSync } from 'node:fs';

/**
 * Whether process `pid` runs: signal 0 checks without sending anything. EPERM means it exists but belongs to
 * another user; ESRCH that there is none; any other error cannot tell.
 */
export function processState(pid: number): 'running' | 'gone' | 'unknown' {
  if (!Number.isInteger(pid) || pid <= 0) return 'gone';
  if (pid === process.pid) return 'running';
  try {
    process.kill(pid, 0);
    return 'running';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EPERM' ? 'running' : code === 'ESRCH' ? 'gone' : 'unknown';
  }
}

/**
 * The fields of process `pid`'s /proc stat line (of its thread `tid`'s, when given) from the third on: [0] is its
 * state (R, S, D, T, t, Z, X...), [2] its process group, [19] when it started. Undefined once it is gone, or where
 * there is no /proc. The command name (field 2) is in parentheses and may hold spaces: fields count after its last ')'.
 */
export function procStat(pid: number, tid?: number): string[] | undefined {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * When process `pid` started, in clock ticks since boot, or undefined where that cannot be read (no /proc, the
 * process is gone). With the pid it names one process: a pid is reused, this is not.
 */
export function processStart(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/**
 * Whether every thread of process `pid` is stopped (or gone): none of them is in the middle of a system call
 * such as a write. Linux only (/proc/PID/task).
 */
export function allThreadsStopped(pid: number): boolean {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true; // gone
  }
  return tids.every((tid) => 'TtZX'.includes(procStat(pid, Number(tid))?.[0] ?? 'X'));
}
