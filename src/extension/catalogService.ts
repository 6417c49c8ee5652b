// Owns the Catalog: created and scanned on first need (the view opening, or a
// command), watched afterwards, rebuilt when roots or sources change. Forwards
// catalog events as one "something changed" signal.

import * as vscode from 'vscode';
import { Catalog } from '../catalog/catalog';
import { defaultCacheDir } from '../catalog/index-file';
import { SOURCE_NAMES, type CatalogEvent, type SourceName } from '../catalog/types';
import { Disposable } from './lifecycle';
import { sourceEnabled, type SpillwaySettings } from './settings';

export interface ScanTiming {
  /** ms from activate() to the first scan's end. */
  sinceActivate: number;
  /** ms the scan itself took. */
  scan: number;
}

export class CatalogService extends Disposable {
  private catalog: Catalog | undefined;
  private loading: Promise<Catalog | undefined> | undefined;
  /** Bumped by every reload: a scan started before it must not win (settings can change mid-scan). */
  private generation = 0;
  private catalogListener: { dispose(): void } | undefined;
  private readonly changed = this.register(new vscode.EventEmitter<CatalogEvent | undefined>());
  readonly onDidChange = this.changed.event;
  firstScan: ScanTiming | undefined;

  constructor(
    private readonly settings: () => SpillwaySettings,
    private readonly log: vscode.LogOutputChannel,
    private readonly activatedAt: number,
  ) {
    super();
    this.register({ dispose: () => void this.detach() });
  }

  /** The catalog once scanned; starts the scan on first call. */
  ready(): Promise<Catalog | undefined> {
    this.loading ??= this.load();
    return this.loading;
  }

  /** The catalog if already scanned (no work started). */
  current(): Catalog | undefined {
    return this.catalog;
  }

  /** Re-scan everything (Refresh) or rebuild with new settings. */
  async reload(): Promise<void> {
    const old = this.detach();
    const loading = (this.loading = this.load());
    await old;
    await loading;
    this.changed.fire(undefined);
  }

  private async load(): Promise<Catalog | undefined> {
    const generation = this.generation;
    const s = this.settings();
    const sources = SOURCE_NAMES.filter((n: SourceName) => sourceEnabled(s, n));
    const catalog = new Catalog({
      roots: s.extraRoots,
      sources,
      logger: { warn: (m) => this.log.warn(m), debug: (m) => this.log.debug(m) },
      // The index the CLI shares: sessions unchanged since the last scan are not read again.
      cacheDir: defaultCacheDir(),
    });
    this.log.info(`Scanning (extra roots: ${s.extraRoots.length ? s.extraRoots.join(', ') : 'none'}; sources: ${sources.join(', ')})`);
    const t0 = Date.now();
    try {
      await catalog.scan();
    } catch (err) {
      this.log.error(`Scan failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      void vscode.window.showErrorMessage(`Spillway could not scan for spills: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    if (generation !== this.generation || this.isDisposed) {
      await catalog.dispose();
      return this.isDisposed ? undefined : this.ready();
    }
    const scanMs = Date.now() - t0;
    this.firstScan ??= { sinceActivate: Date.now() - this.activatedAt, scan: scanMs };
    for (const p of catalog.problems()) this.log.warn(p);
    this.log.info(`Scanned ${catalog.sessions().length} sessions in ${scanMs} ms`);
    this.catalog = catalog;
    this.catalogListener = catalog.onDidChange((e) => this.changed.fire(e));
    catalog.watch().catch((err: unknown) => this.log.warn(`Live updates are off: ${err instanceof Error ? err.message : String(err)}`));
    return catalog;
  }

  /** Forgets the current catalog at once (synchronously) and returns its disposal. */
  private detach(): Promise<void> {
    this.generation++;
    this.catalogListener?.dispose();
    this.catalogListener = undefined;
    const old = this.catalog;
    this.catalog = undefined;
    this.loading = undefined;
    return old?.dispose() ?? Promise.resolve();
  }
}
