// One object holding every service of the extension; disposing it (a single
// entry in context.subscriptions) disposes them all in reverse order.

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { CatalogService } from './catalogService';
import { ChartPanels } from './chartPanel';
import { registerCommands } from './commands';
import { formatBytes } from './format';
import { KeptSessions } from './keptSessions';
import { LazyFacts } from './lazyFacts';
import { SearchView } from './search';
import { AutoCleanup } from './autoCleanup';
import { BlobFileSystem } from './blobFileSystem';
import { Disposable } from './lifecycle';
import { RemoteRoots } from './remoteModel';
import { RemoteSliceFileSystem } from './remoteTree';
import { readSettings, SECTION, type SpillwaySettings } from './settings';
import { SliceDocumentProvider, SLICE_SCHEME } from './sliceDocument';
import { SpillTreeProvider } from './tree';
import type { SpillNode } from './treeModel';

const SORT_KEY = 'spillway.sort';

export class Container extends Disposable {
  private settingsCache: SpillwaySettings;
  readonly log: vscode.LogOutputChannel;
  readonly service: CatalogService;
  readonly tree: SpillTreeProvider;
  readonly view: vscode.TreeView<SpillNode>;
  readonly search: SearchView;
  private readonly status: vscode.StatusBarItem;
  /** ms from activate() until the tree first showed sessions. */
  firstPopulatedMs: number | undefined;

  constructor(context: vscode.ExtensionContext, activatedAt: number) {
    super();
    this.settingsCache = readSettings((k) => vscode.workspace.getConfiguration(SECTION).get(k));
    const settings = () => this.settingsCache;
    this.log = this.register(vscode.window.createOutputChannel('Spillway', { log: true }));
    this.service = this.register(new CatalogService(settings, this.log, activatedAt));
    const kept = new KeptSessions(context.globalState, (p) => fs.existsSync(p));
    const auto = this.register(new AutoCleanup(this.service, settings, context.globalState, this.log, () => this.tree?.refresh()));
    // One store of lazily read facts: a blob's row reads the same in the tree and in the Search view.
    const facts = new LazyFacts();
    this.tree = this.register(new SpillTreeProvider(this.service, () => this.settingsCache.previewBytes, kept, (p) => auto.isPinned(p), facts));
    this.tree.sort = context.globalState.get<'time' | 'size'>(SORT_KEY) ?? settings().sortBy;
    this.view = this.register(vscode.window.createTreeView('spillway.spills', { treeDataProvider: this.tree, showCollapseAll: true, canSelectMany: true }));
    this.status = this.register(vscode.window.createStatusBarItem('spillway.total', vscode.StatusBarAlignment.Left, 10));
    this.status.name = 'Spillway: spilled output';
    this.status.command = 'spillway.spills.focus';
    const charts = this.register(new ChartPanels(context.extensionUri, this.service, settings, (key) => vscode.commands.executeCommand('spillway.revealBlob', key) as Promise<void>, kept));
    this.register(vscode.workspace.registerTextDocumentContentProvider(SLICE_SCHEME, new SliceDocumentProvider(this.service)));
    this.register(new BlobFileSystem(this.service));
    const remote = new RemoteRoots();
    this.register({ dispose: () => remote.dispose() });
    remote.sync(settings().remoteRoots);
    this.tree.remote = remote;
    this.register(new RemoteSliceFileSystem(remote));

    const setContext = (key: string, value: unknown) => vscode.commands.executeCommand('setContext', key, value);
    void setContext('spillway.sort', this.tree.sort);
    void setContext('spillway.state', 'loading');
    const search = (this.search = this.register(new SearchView(this.service, settings, context.globalState, this.log, facts, remote)));
    registerCommands(context, {
      service: this.service,
      tree: this.tree,
      view: this.view,
      charts,
      kept,
      search,
      auto,
      settings,
      log: this.log,
      setContext,
      saveSort: (sort) => context.globalState.update(SORT_KEY, sort),
    });

    // Opt-in: with the setting off this neither scans nor reads anything at activation.
    void auto.run('start');
    this.register(this.service.onDidChange(() => {
      this.updateSummary();
      // Only a checked list may prune: the index's word alone could be out of date.
      const listed = this.service.checked ? this.service.current()?.sessions() : undefined;
      if (listed) void kept.prune(new Set(listed.map((s) => s.key)));
    }));
    this.register(this.tree.onDidChangeTreeData(() => this.updateSummary()));
    // The first scan starts when the view first asks for children (getChildren),
    // never at activation; this only reports when it ends.
    // Its scan's own event can come before the check is recorded: the summary is brought up to date once more when it is.
    this.register(this.view.onDidChangeVisibility((e) => {
      if (!e.visible) return;
      void this.service.ready().then(() => this.updateSummary());
      void this.service.scanned().then(() => this.updateSummary());
    }));
    this.register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration(SECTION)) return;
        const before = this.settingsCache;
        this.settingsCache = readSettings((k) => vscode.workspace.getConfiguration(SECTION).get(k));
        if (e.affectsConfiguration(`${SECTION}.cleanup`)) void auto.syncPolicy().then(() => auto.run('settings'));
        if (remote.sync(this.settingsCache.remoteRoots)) this.tree.refresh();
        if (JSON.stringify(before.extraRoots) !== JSON.stringify(this.settingsCache.extraRoots) || JSON.stringify(before.sources) !== JSON.stringify(this.settingsCache.sources)) {
          this.log.info('Roots or sources changed: scanning again');
          void this.service.reload();
        }
        charts.refreshAll();
      }),
    );
  }

  private updateSummary(): void {
    const catalog = this.service.current();
    if (!catalog) return;
    const sessions = catalog.sessions().filter((s) => s.blobs.length > 0);
    const blobs = sessions.reduce((n, s) => n + s.blobs.length, 0);
    const bytes = sessions.reduce((n, s) => n + s.bytes, 0);
    void vscode.commands.executeCommand('setContext', 'spillway.state', blobs ? 'ready' : 'empty');
    if (blobs && this.firstPopulatedMs === undefined && this.service.firstScan) {
      this.firstPopulatedMs = this.service.firstScan.sinceActivate;
      const { scan, fromIndex } = this.service.firstScan;
      this.log.info(`First populated tree ${this.firstPopulatedMs} ms after activation (${fromIndex ? 'index read' : 'scan'} ${scan} ms)`);
    }
    const summary = `${blobs} blob${blobs === 1 ? '' : 's'} in ${sessions.length} session${sessions.length === 1 ? '' : 's'}, ${formatBytes(bytes)} spilled`;
    this.view.badge = blobs ? { value: blobs, tooltip: summary } : undefined;
    // Shown from the index, not yet checked against the disk: say so beside the view's title.
    this.view.description = this.service.checked ? undefined : 'checking…';
    this.status.text = `$(archive) ${formatBytes(bytes)} spilled`;
    this.status.tooltip = `Spillway: ${summary}`;
    if (blobs) this.status.show();
    else this.status.hide();
  }
}
