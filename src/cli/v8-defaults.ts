// The CLI's changes to V8's defaults, made only when the CLI is the process
// (never in the extension host, nor for the library's users).
//
// V8 doubles its young generation as objects survive, and each page it then
// touches for the first time is a page fault: a young generation kept at its
// first size faults less, and its small collections are done by one thread,
// not helpers taking the core the scan is using (docs/catalog.md, "Page faults").
//
// A command lives a second or two, and much of a cold listing's time was
// TurboFan compiling functions on helper threads that share the two cores
// with the scan. Twice V8's interrupt budget (a function runs twice as long
// before it is optimized) leaves fewer to compile
// (docs/catalog.md, "Where a cold listing's time goes").
import { setFlagsFromString } from 'node:v8';
import { onWorkerOnline } from '../catalog/shared/workers';

/** V8 11 to 13 (Node 20 to 24) have these flags, measured; another V8 could print an error for a flag it lacks. */
const MEASURED_ON = /^1[1-3]\./;

/** V8's default interrupt budget (V8 11 to 13), the bytecode a function runs between checks whether to optimize it. */
const INTERRUPT_BUDGET = 66 * 1024;

export function tuneV8ForCommands(): void {
  if (!MEASURED_ON.test(process.versions.v8)) return;
  setFlagsFromString(`--interrupt-budget=${2 * INTERRUPT_BUDGET}`);
  const keepYoungGenerationSmall = (): void => {
    setFlagsFromString('--semi-space-growth-factor=1');
    setFlagsFromString('--no-parallel-scavenge');
  };
  keepYoungGenerationSmall();
  // V8 raises a growth factor below 2 to 2 whenever it sets up a heap: when the process starts (so the flag does
  // nothing on the command line) and when a worker thread starts (measured: the young generation grew again after
  // one). So it is set again once each worker is online.
  onWorkerOnline(keepYoungGenerationSmall);
}
