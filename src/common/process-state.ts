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
 * When process `pid` started, in clock ticks since boot (field 22 of /proc/PID/stat), or undefined where that
 * cannot be read (no /proc, the process is gone). With the pid it names one process: a pid is reused, this is not.
 */
export function processStart(pid: number): string | undefined {
  try {
    return fieldsAfterName(readFileSync(`/proc/${pid}/stat`, 'utf8'))[19];
  } catch {
    return undefined;
  }
}

/**
 * Whether every thread of process `pid` is stopped (or gone): none of them is in the middle of a system call
 * such as a write. Linux only (/proc/PID/task/TID/stat, field 3).
 */
export function allThreadsStopped(pid: number): boolean {
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const state = fieldsAfterName(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'))[0] ?? '';
      if (!'TtZX'.includes(state)) return false;
    }
    return true;
  } catch {
    return true; // gone
  }
}

/** The fields of a /proc stat line from the third on: the command name (field 2) is in parentheses and may hold spaces. */
function fieldsAfterName(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
