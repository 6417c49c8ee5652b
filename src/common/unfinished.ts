// A command whose work waits on something that can no longer happen (a promise
// nobody will settle) lets Node's event loop run dry, and Node then ends the
// process with status 0, its output cut short: a script, or the Bash capture's
// `|| cat` fallback, would take that for success.

/**
 * Ends the process with status `failure`, after saying so, when `work` has not settled by the time the event loop
 * has nothing left to run.
 */
export function failIfUnfinished(work: Promise<unknown>, failure: number, say: (text: string) => void): void {
  let settled = false;
  const done = (): void => void (settled = true);
  work.then(done, done);
  process.once('beforeExit', () => {
    if (settled) return;
    say('stopped before it finished (an internal error: nothing was left to wait for)\n');
    process.exitCode = failure;
  });
}
