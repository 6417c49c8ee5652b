// Live updates: one fs.watch per folder of the known roots, never one per
// file. A folder's watcher already reports what happens to the files in it
// (created, written, removed, renamed); a watcher per file costs far more.
// A path is delivered once nothing has happened to it for `settleMs` (a file
// being written keeps firing), and settled paths are coalesced into batches.
import { promises as fsp, readdirSync, watch, type FSWatcher } from 'node:fs';
import * as path from 'node:path';
import { pauser } from '../shared/pause';
import type { KnownRoot } from '../types';

export interface WatcherOptions {
  /** A path must see no event for this long before it is delivered. */
  settleMs: number;
  /** Settled paths within this window are delivered as one batch. */
  coalesceMs: number;
  onBatch: (paths: string[]) => Promise<void>;
  onError: (message: string) => void;
}

const IGNORED_NAMES = new Set(['node_modules', '.git']);
/** Folder levels watched below a root's own walk depth (claimed folders hold blobs a level or two down). */
const EXTRA_DEPTH = 3;

interface WatchedFolder {
  watcher: FSWatcher;
  /** Folder levels still watched below this one. */
  levels: number;
  /** The folders watched right below it (stopped with it); made with the first (most folders have none). */
  children?: Set<string>;
}

export class CatalogWatcher {
  private readonly folders = new Map<string, WatchedFolder>();
  private readonly readyPromise: Promise<void>;
  /** Path -> when its last event came. */
  private readonly unsettled = new Map<string, number>();
  private settleTimer: NodeJS.Timeout | undefined;
  private batch = new Set<string>();
  private batchTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  /** Error codes already reported: a full inotify table fails every folder after it the same way. */
  private readonly reportedCodes = new Set<string>();

  constructor(roots: KnownRoot[], private readonly options: WatcherOptions) {
    this.readyPromise = Promise.all(roots.map((root) => this.add(root))).then(() => undefined);
  }

  /** Watch one more root (one that appeared after watching started); resolves when its folders are watched. */
  add(root: KnownRoot): Promise<void> {
    // A listing-only root (TMPDIR for pi's bash logs) is watched itself only, never its whole tree.
    return this.watchTree(root.path, root.depth === 0 ? 0 : root.depth + EXTRA_DEPTH);
  }

  /** Stop watching a root's folders (it was removed, or is another folder now). */
  remove(rootPath: string): void {
    this.unwatch(rootPath);
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.settleTimer);
    clearTimeout(this.batchTimer);
    for (const folder of this.folders.values()) folder.watcher.close();
    this.folders.clear();
    await this.running;
  }

  /** Watches `top` and the folders below it down to `levels`, breadth first, yielding to the event loop as it goes. */
  private async watchTree(top: string, levels: number): Promise<void> {
    const pause = pauser();
    let level: Array<[string, number]> = [[top, levels]];
    while (level.length > 0 && !this.closed) {
      const next: Array<[string, number]> = [];
      for (const [dir, left] of level) {
        const turn = pause();
        if (turn) await turn;
        if (this.closed || this.folders.has(dir) || !this.watchFolder(dir, left) || left === 0) continue;
        let entries;
        try {
          entries = readdirSync(dir, { withFileTypes: true });
        } catch {
          continue; // gone or unreadable meanwhile: the walk reports unreadable folders
        }
        // Symlinks are not followed: isDirectory() is false for them.
        for (const e of entries) if (e.isDirectory() && !IGNORED_NAMES.has(e.name)) next.push([path.join(dir, e.name), left - 1]);
      }
      level = next;
    }
  }

  private watchFolder(dir: string, levels: number): boolean {
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: true }, (event, name) => this.changed(dir, name ? path.join(dir, name.toString()) : dir, event === 'rename'));
    } catch (err) {
      this.failed(dir, err);
      return false;
    }
    watcher.on('error', () => this.unwatch(dir));
    this.folders.set(dir, { watcher, levels });
    const parent = this.folders.get(path.dirname(dir));
    if (parent) (parent.children ??= new Set()).add(dir);
    return true;
  }

  private unwatch(dir: string): void {
    const watched = this.folders.get(dir);
    if (!watched) return;
    watched.watcher.close();
    this.folders.delete(dir);
    this.folders.get(path.dirname(dir))?.children?.delete(dir);
    for (const child of watched.children ?? []) this.unwatch(child);
  }

  private failed(dir: string, err: unknown): void {
    const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
    // Gone, or unreadable (which the scan already reports as it walks): nothing more to say.
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EPERM' || this.reportedCodes.has(code)) return;
    this.reportedCodes.add(code);
    const why = code === 'ENOSPC' ? ': the system limit on watched folders is reached (fs.inotify.max_user_watches); folders past it are not live' : '';
    this.options.onError(`cannot watch ${dir} (${code})${why}`);
  }

  /** `renamed`: an entry was created, removed or renamed (not only written). */
  private changed(dir: string, changed: string, renamed: boolean): void {
    if (this.closed) return;
    this.unsettled.set(changed, performance.now());
    const levels = this.folders.get(dir)?.levels ?? 0;
    if (renamed && changed !== dir && levels > 0) void this.follow(changed, levels - 1);
    this.settleSoon(this.options.settleMs);
  }

  /**
   * An entry of a watched folder was created, removed or renamed: if it is a
   * folder now, it is watched afresh at once (what is written in it from now
   * on is seen; its own event, once settled, has the catalog list it); a
   * folder watched there before is let go (it may be another one now).
   */
  private async follow(changed: string, levels: number): Promise<void> {
    const stat = await fsp.lstat(changed).catch(() => undefined);
    if (this.closed) return;
    this.unwatch(changed);
    if (stat?.isDirectory() && !IGNORED_NAMES.has(path.basename(changed))) await this.watchTree(changed, levels);
  }

  private settleSoon(delay: number): void {
    if (this.settleTimer || this.closed) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      const now = performance.now();
      let next = Infinity;
      for (const [changed, at] of this.unsettled) {
        const quietFor = now - at;
        if (quietFor >= this.options.settleMs) {
          this.unsettled.delete(changed);
          this.deliver(changed);
        } else next = Math.min(next, this.options.settleMs - quietFor);
      }
      if (next !== Infinity) this.settleSoon(next);
    }, delay);
  }

  private deliver(changed: string): void {
    this.batch.add(changed);
    if (this.batchTimer) return;
    this.batchTimer = setTimeout(() => {
      this.batchTimer = undefined;
      const paths = [...this.batch];
      this.batch = new Set();
      // Batches run one after another so a session is never described twice at once.
      this.running = this.running.then(() => this.options.onBatch(paths)).catch((err) => this.options.onError(String(err)));
    }, this.options.coalesceMs);
  }
}
