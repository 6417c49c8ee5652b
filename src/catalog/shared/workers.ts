// Every worker thread the catalog starts is made here, so that whoever owns
// the process can be told when one is online: the CLI then sets its V8 flag
// again (src/cli/v8-defaults.ts), which a worker's start undoes. Hooks
// live on globalThis because each of the CLI's bundles (dist/cli.js,
// dist/cli-list.js, ...) holds its own copy of this module.
import type { Worker, WorkerOptions } from 'node:worker_threads';

// Loaded when a worker starts (a large scan, a regex search): a few ms of every command's start otherwise.
export const workerThreads = (): typeof import('node:worker_threads') => require('node:worker_threads');

const HOOKS = Symbol.for('spillway.onWorkerOnline');
type WithHooks = typeof globalThis & { [HOOKS]?: Array<() => void> };

/** Calls `hook` on this thread each time a worker started by newWorker() is online. */
export function onWorkerOnline(hook: () => void): void {
  ((globalThis as WithHooks)[HOOKS] ??= []).push(hook);
}

/** `new Worker(file, options)` (`file` the code itself with `eval`), followed by the onWorkerOnline() hooks once it runs. */
export function newWorker(file: string, options: WorkerOptions): Worker {
  const worker = new (workerThreads().Worker)(file, options);
  const hooks = (globalThis as WithHooks)[HOOKS];
  if (hooks?.length) worker.once('online', () => hooks.forEach((hook) => hook()));
  return worker;
}
