// Fault injection for tests: with SPILLWAY_TEST_PAUSE=<stage> in the
// environment, a spill stops at that stage, says `spillway-paused <stage>` on
// stderr and waits to be killed, so a test can SIGKILL it at an exact point.
// Stages: blob-write (first piece of the blob written), before-rename (temp
// complete), before-manifest (blob in place), manifest-append (manifest open,
// record not written). Unset (always, outside tests) it does nothing.

export type PauseStage = 'blob-write' | 'before-rename' | 'before-manifest' | 'manifest-append';

export async function testPause(stage: PauseStage): Promise<void> {
  if (process.env.SPILLWAY_TEST_PAUSE !== stage) return;
  process.stderr.write(`spillway-paused ${stage}\n`);
  // Held until killed; the timer only keeps the event loop alive.
  await new Promise(() => setInterval(() => undefined, 60_000));
}
