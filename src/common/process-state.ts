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
