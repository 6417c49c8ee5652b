// chokidar over the known roots: events settle (awaitWriteFinish), then are
// coalesced into one batch of changed paths for the catalog.
import * as path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { KnownRoot } from './types';

export interface WatcherOptions {
  /** A written file must keep its size this long before its event fires. */
  settleMs: number;
  /** Events within this window are delivered as one batch. */
  coalesceMs: number;
  onBatch: (paths: string[]) => Promise<void>;
  onError: (message: string) => void;
}

const IGNORED_NAMES = new Set(['node_modules', '.git']);
/** Folder levels watched below a root's own walk depth (claimed folders hold blobs a level or two down). */
const EXTRA_DEPTH = 3;

export class CatalogWatcher {
  private readonly watchers: FSWatcher[] = [];
  private readonly readyPromise: Promise<void>;
  private batch = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(roots: KnownRoot[], private readonly options: WatcherOptions) {
    this.readyPromise = Promise.all(roots.map((root) => this.add(root))).then(() => undefined);
  }

  /** Watch one more root (one that appeared after watching started); resolves when ready. */
  add(root: KnownRoot): Promise<void> {
    const watcher = watch(root.path, {
      ignoreInitial: true,
      persistent: true,
      followSymlinks: false,
      // A listing-only root (TMPDIR for pi's bash logs) is watched one level deep, never its whole tree.
      depth: root.depth === 0 ? 0 : root.depth + EXTRA_DEPTH,
      ignored: (p: string) => IGNORED_NAMES.has(path.basename(p)),
      awaitWriteFinish: { stabilityThreshold: this.options.settleMs, pollInterval: Math.max(10, Math.floor(this.options.settleMs / 4)) },
    });
    watcher.on('all', (_event, changed) => this.push(changed));
    watcher.on('error', (err) => this.options.onError(`watch ${root.path}: ${(err as Error).message ?? String(err)}`));
    this.watchers.push(watcher);
    return new Promise((resolve) => watcher.once('ready', () => resolve()));
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(this.watchers.map((w) => w.close()));
    await this.running;
  }

  private push(changed: string): void {
    if (this.closed) return;
    this.batch.add(path.resolve(changed));
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const paths = [...this.batch];
      this.batch = new Set();
      // Batches run one after another so a session is never described twice at once.
      this.running = this.running.then(() => this.options.onBatch(paths)).catch((err) => this.options.onError(String(err)));
    }, this.options.coalesceMs);
  }
}
