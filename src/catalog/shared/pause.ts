// Long synchronous work (reading files with readSync, which from the page
// cache is several times faster than the promise API) still lets the event
// loop in: cancels, progress, other reads, the extension host's own events.

/**
 * A check to await between steps: it yields (setImmediate) when the last yield is more than `everyMs` old.
 * Timed with Date.now(), not performance.now(): the global `performance` loads perf_hooks and its ten modules on
 * first use, a few ms of every command's start. A clock set back only restarts the count.
 */
export function pauser(everyMs = 8): () => Promise<void> | undefined {
  let last = Date.now();
  return () => {
    const now = Date.now();
    if (now - last < everyMs && now >= last) return undefined;
    last = now;
    return new Promise((resolve) => setImmediate(resolve)).then(() => void (last = Date.now()));
  };
}
