// Long synchronous work (reading files with readSync, which from the page
// cache is several times faster than the promise API) still lets the event
// loop in: cancels, progress, other reads, the extension host's own events.

/** A check to await between steps: it yields (setImmediate) when the last yield is more than `everyMs` old. */
export function pauser(everyMs = 8): () => Promise<void> | undefined {
  let last = performance.now();
  return () => {
    const now = performance.now();
    if (now - last < everyMs) return undefined;
    last = now;
    return new Promise((resolve) => setImmediate(resolve)).then(() => void (last = performance.now()));
  };
}
