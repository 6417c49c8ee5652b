import { readFileSync } from 'node:fs';

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
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
