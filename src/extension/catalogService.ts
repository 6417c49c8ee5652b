// Owns the Catalog: created and scanned on first need (the view opening, or a
// command), watched afterwards, rebuilt when roots or sources change. Forwards
// catalog events as one "something changed" signal. A saved index is shown
// first, as stored, and checked against the disk once the view has its rows.

import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { Catalog } from '../catalog/catalog';
import { defaultCacheDir } from '../catalog/index/index-file';
import { SOURCE_NAMES, type CatalogEvent, type SourceName } from '../catalog/types';
import { Disposable } from './lifecycle';
import { sourceEnabled, type SpillwaySettings } from './settings';

export interface ScanTiming {
  /** ms from activate() to the first populated catalog (the index shown, or the first scan's end). */
  sinceActivate: number;
  /** ms loading took (reading the index, or the scan). */
  scan: number;
  /** Whether the index was shown before the scan checked it. */
  fromIndex: boolean;
}

/** How long the check of a shown index waits for the view's first rows (a command may want the catalog with the view closed). */
const FIRST_ROWS_WAIT_MS = 2000;
/** Once the first rows are handed to the workbench, the time it has to draw them before the check takes the CPU. */
const FIRST_ROWS_DRAW_MS = 100;
/**
 * Test only: the check of a shown index waits until this file exists, so that a test sees the index's rows before
 * the check corrects them. Unset (always, outside tests), nothing waits.
 */
const TEST_HOLD_CHECK_ENV = 'SPILLWAY_TEST_HOLD_CHECK_UNTIL_FILE';

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class CatalogService extends Disposable {
  private catalog: Catalog | undefined;
  /** Resolves once sessions can be shown: the index read, or the first scan done. */
  private loading: Promise<Catalog | undefined> | undefined;
  /** Resolves once the scan has checked everything against the disk. */
  private scanning: Promise<Catalog | undefined> | undefined;
  /** Bumped by every reload: a scan started before it must not win (settings can change mid-scan). */
  private generation = 0;
  private catalogListener: { dispose(): void } | undefined;
  private catalogChecked = false;
  private readonly changed = this.register(new vscode.EventEmitter<CatalogEvent | undefined>());
  readonly onDidChange = this.changed.event;
  firstScan: ScanTiming | undefined;
  /** Ends the check's wait for the view's first rows (see rowsShown). */
  private rowsHandedOver: (() => void) | undefined;

  constructor(
    private readonly settings: () => SpillwaySettings,
    private readonly log: vscode.LogOutputChannel,
    private readonly activatedAt: number,
  ) {
    super();
    this.register({ dispose: () => void this.detach() });
  }

  /**
   * The catalog once it has something to show; starts loading on first call.
   * From a warm index that is before the scan ends: sessions are as the index
   * stored them until the scan's `full` event corrects them.
   */
  ready(): Promise<Catalog | undefined> {
    this.start();
    return this.loading!;
  }

  /** The catalog once scanned (for what must not act on the index's word alone, such as automatic cleanup). */
  scanned(): Promise<Catalog | undefined> {
    this.start();
    return this.scanning!;
  }

  /** Whether the current catalog has been checked against the disk (not only shown from the index). */
  get checked(): boolean {
    return this.catalog !== undefined && this.catalogChecked;
  }

  /**
   * The tree has handed the workbench its first rows (an agent's sessions, or nothing to show). The check of an index
   * shown waits for this (at most FIRST_ROWS_WAIT_MS): on two cores it would otherwise compete with the first paint.
   */
  rowsShown(): void {
    this.rowsHandedOver?.();
  }

  /** Until the view's first rows are drawn, or FIRST_ROWS_WAIT_MS; then, in a test that asks, until its file exists. */
  private async firstRowsDrawn(handedOver: Promise<void>): Promise<void> {
    const t0 = Date.now();
    await Promise.race([handedOver.then(() => delay(FIRST_ROWS_DRAW_MS)), delay(FIRST_ROWS_WAIT_MS)]);
    this.rowsHandedOver = undefined;
    const hold = process.env[TEST_HOLD_CHECK_ENV];
    if (hold) {
      this.log.info(`Checking held until ${hold} exists (${TEST_HOLD_CHECK_ENV})`);
      while (!existsSync(hold) && !this.isDisposed) await delay(100);
    }
    this.log.info(`Checking the index ${Date.now() - t0} ms after showing it`);
  }

  /** The catalog if already shown (no work started). */
  current(): Catalog | undefined {
    return this.catalog;
  }

  /** Re-scan everything (Refresh) or rebuild with new settings. */
  async reload(): Promise<void> {
    const old = this.detach();
    this.start();
    await old;
    await this.scanning;
    this.changed.fire(undefined);
  }

  private start(): void {
    if (this.scanning) return;
    let show!: (catalog: Catalog | undefined) => void;
    this.loading = new Promise((resolve) => (show = resolve));
    this.scanning = this.load(show);
    // A scan that ended without the index shown first also ends the wait for something to show.
    void this.scanning.then(show);
  }

  private async load(show: (catalog: Catalog) => void): Promise<Catalog | undefined> {
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
    const stale = (): boolean => generation !== this.generation || this.isDisposed;
    this.log.info(`Scanning (extra roots: ${s.extraRoots.length ? s.extraRoots.join(', ') : 'none'}; sources: ${sources.join(', ')})`);
    const t0 = Date.now();
    let shown = false;
    const handedOver = new Promise<void>((resolve) => (this.rowsHandedOver = resolve));
    /** Show the catalog before its scan ends: the index as stored, or a first scan's newest sessions. */
    const showEarly = (fromIndex: boolean): void => {
      shown = true;
      const ms = Date.now() - t0;
      this.firstScan ??= { sinceActivate: Date.now() - this.activatedAt, scan: ms, fromIndex };
      const count = catalog.sessions().length;
      this.log.info(fromIndex ? `Showing ${count} sessions from the index after ${ms} ms while checking them` : `Showing the ${count} newest sessions after ${ms} ms while the scan goes on`);
      this.attach(catalog, false);
      show(catalog);
    };
    try {
      // The index first, shown as it is while the scan checks it: a first tree within a second at 100,000 blobs.
      if ((await catalog.showIndexed()) && !stale()) {
        showEarly(true);
        // The rows first: the check (a walk and a stat of every blob) starts once they are drawn.
        await this.firstRowsDrawn(handedOver);
      }
      // No index: a long scan announces the newest sessions once it has them; they are shown while it goes on.
      const early = shown ? undefined : catalog.onDidChange(() => {
        if (!shown && !stale() && catalog.sessions().length > 0) showEarly(false);
      });
      try {
        await catalog.scan();
      } finally {
        early?.dispose();
      }
    } catch (err) {
      this.log.error(`Scan failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      void vscode.window.showErrorMessage(`Spillway could not scan for spills: ${err instanceof Error ? err.message : String(err)}`);
      return shown ? catalog : undefined;
    }
    if (stale()) {
      await catalog.dispose();
      return this.isDisposed ? undefined : this.scanned();
    }
    const scanMs = Date.now() - t0;
    this.firstScan ??= { sinceActivate: Date.now() - this.activatedAt, scan: scanMs, fromIndex: false };
    for (const p of catalog.problems()) this.log.warn(p);
    this.log.info(`Scanned ${catalog.sessions().length} sessions in ${scanMs} ms`);
    this.attach(catalog, true);
    catalog.watch().catch((err: unknown) => this.log.warn(`Live updates are off: ${err instanceof Error ? err.message : String(err)}`));
    return catalog;
  }

  private attach(catalog: Catalog, checked: boolean): void {
    this.catalogChecked = checked;
    if (this.catalog === catalog) return;
    this.catalog = catalog;
    this.catalogListener = catalog.onDidChange((e) => this.changed.fire(e));
  }

  /** Forgets the current catalog at once (synchronously) and returns its disposal. */
  private detach(): Promise<void> {
    this.generation++;
    this.catalogListener?.dispose();
    this.catalogListener = undefined;
    const old = this.catalog;
    this.catalog = undefined;
    this.catalogChecked = false;
    this.loading = undefined;
    this.scanning = undefined;
    return old?.dispose() ?? Promise.resolve();
  }
}
