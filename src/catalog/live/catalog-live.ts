// Keeping a catalog live: a watcher per folder of the roots, roots that come and go, changed paths described
// again and written to the index a little later.

import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isInside } from '../../spill/inside';
import { CatalogScan } from '../scan/catalog-scan';
import { fingerprint } from '../scan/session-info';
import { folderId, notAFolder } from '../shared/folder-id';
import { offer, walk } from '../scan/walk';
import { claimKey, type SessionClaim } from '../sources/source';
import { CatalogWatcher } from './watcher';

/** A catalog that follows changes on disk after its first scan. */
export abstract class CatalogLive extends CatalogScan {
  /** Start watching the existing roots (a watcher per folder, see watcher.ts); resolves once the watchers are ready. */
  async watch(): Promise<void> {
    if (this.watcher || this.disposed) return;
    const roots = this.roots.filter((r) => r.exists);
    this.watcher = new CatalogWatcher(roots, {
      settleMs: this.options.settleMs ?? 150,
      coalesceMs: this.options.coalesceMs ?? 75,
      onBatch: (paths) => this.applyChanges(paths),
      onError: (message) => this.reportOnce(message),
    });
    await this.watcher.ready();
    for (const root of roots) this.watchedRoots.set(root.path, folderId(root.path));
    // A root made later, or removed and made again (its watchers are on what is gone), has no watched folder above it to tell: look now and then.
    this.rootPoll = setInterval(() => void this.checkRoots(), this.options.rootPollMs ?? 5000);
    this.rootPoll.unref();
  }

  /** Let go of the roots removed since they were watched; watch and walk the ones that appeared (or were made again). */
  protected async checkRoots(): Promise<void> {
    if (this.checkingRoots) return;
    this.checkingRoots = true;
    try {
      for (const root of this.roots) {
        if (this.disposed) return;
        const id = folderId(root.path);
        const watched = this.watchedRoots.get(root.path);
        if (id === watched) continue;
        if (watched !== undefined) {
          this.watcher?.remove(root.path);
          // The folder went (or another took its place): moving it away sends no event for the files in it, so
          // its sessions leave now; those still there (or there again) are found by the walk below.
          for (const [key, record] of [...this.records]) {
            if (this.rootOf(record.claim.dir)?.path !== root.path) continue;
            this.drop(key);
            this.pending.removed.add(key);
          }
        }
        this.watchedRoots.set(root.path, id);
        root.exists = id !== undefined;
        if (!root.exists) {
          if (root.origin === 'user') this.reportOnce(notAFolder(root.path));
          this.flushSoon(0);
          continue;
        }
        // Watch first, then walk: a file written in between is seen by one or the other.
        await this.watcher?.add(root);
        const result = await walk(root.path, root.depth, this.sourcesFor(root));
        for (const bad of result.unreadable) this.reportOnce(`cannot read ${bad.path} (${bad.code})`);
        for (const claim of result.claims) {
          const key = await this.describe(claim);
          if (this.records.has(key)) {
            this.pending.removed.delete(key);
            this.pending.changed.add(key);
          }
        }
        this.flushSoon(0);
      }
    } finally {
      this.checkingRoots = false;
    }
  }

  /** Stop watching and drop listeners. */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.indexSave) {
      clearTimeout(this.indexSave);
      this.indexSave = undefined;
      await this.saveIndexNow();
    }
    if (this.rootPoll) clearInterval(this.rootPoll);
    this.listeners.clear();
    await this.watcher?.close();
    this.watcher = undefined;
  }

  /** Live changes are written to the index a little later, together. */
  protected saveIndexSoon(): void {
    if (!this.indexFile || this.indexSave || this.disposed) return;
    this.indexSave = setTimeout(() => {
      this.indexSave = undefined;
      void this.saveIndexNow();
    }, this.options.indexSaveMs ?? 2000);
    this.indexSave.unref();
  }

  /**
   * React to changed paths (a coalesced watcher batch, or a clean): refresh
   * the sessions owning or reading them; offer unknown folders to the sources.
   */
  protected async applyChanges(paths: string[]): Promise<void> {
    if (this.disposed) return;
    const refresh = new Map<string, SessionClaim>();
    const probe = new Set<string>();
    for (const changed of paths) {
      for (const key of this.dependents.get(changed) ?? []) {
        const record = this.records.get(key);
        if (record) refresh.set(key, record.claim);
      }
      const owner = this.ownerOf(changed);
      if (owner) {
        refresh.set(owner.key, owner.claim);
        continue;
      }
      if (this.blobMap.has(changed)) continue;
      // Unknown place: the folder it is in (and the changed path, if a folder) may be a new session.
      probe.add(path.dirname(changed));
      probe.add(changed);
    }
    for (const dir of probe) {
      const root = this.rootOf(dir);
      if (!root) continue;
      const sources = this.sourcesFor(root);
      // Climb a few levels: a new blob may make its grandparent claimable (claude: <session>/tool-results/x).
      for (let d: string = dir, i = 0; i < 3 && isInside(root.path, d); d = path.dirname(d), i++) {
        const entries = await fsp.readdir(d, { withFileTypes: true }).catch(() => undefined);
        if (!entries) continue;
        for (const claim of offer({ path: d, entries }, sources)) {
          const key = claimKey(claim);
          // A fallback claim owns no folder, so a new file in it is only seen here.
          if (!this.records.has(key) || refresh.has(key) || claim.fallback) refresh.set(key, claim);
        }
        if (d === root.path) break;
      }
    }
    for (const [key, claim] of refresh) {
      const before = this.records.get(key);
      const print = before && fingerprint(before.info);
      await this.describe(claim);
      const after = this.records.get(key);
      // Only real changes are announced (the watcher also reports touches and late adds).
      if (after && fingerprint(after.info) !== print) this.pending.changed.add(key);
      else if (!after && before) this.pending.removed.add(key);
    }
    this.flushSoon(0);
    if (refresh.size > 0) this.saveIndexSoon();
  }

  protected ownerOf(changed: string): { key: string; claim: SessionClaim } | undefined {
    for (let d: string = changed, i = 0; i < 4; d = path.dirname(d), i++) {
      const key = this.folderOwner.get(d);
      const record = key ? this.records.get(key) : undefined;
      if (key && record) return { key, claim: record.claim };
      if (path.dirname(d) === d) break;
    }
    return undefined;
  }

}