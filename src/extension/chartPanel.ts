// The context chart: one webview panel per session. The page posts "ready",
// then the host sends the data; later catalog changes re-send it. Strict CSP
// with a nonce; scripts and styles only from dist/webview and media/.

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { isPageToHost, type HostToPage } from '../webview/protocol';
import type { CatalogService } from './catalogService';
import type { KeptSessions } from './keptSessions';
import { toChartData } from './chartModel';
import { Disposable } from './lifecycle';
import type { SpillwaySettings } from './settings';
import { sessionLabel } from './treeModel';

/** What one chart shows: its title, its data when the page asks, and where a clicked blob leads. */
export interface ChartSource {
  readonly key: string;
  readonly title: string;
  load(settings: SpillwaySettings): Promise<HostToPage>;
  revealBlob(blobId: string): Promise<void>;
}

export class ChartPanels extends Disposable {
  private readonly panels = new Map<string, ChartPanel>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly service: CatalogService,
    private readonly settings: () => SpillwaySettings,
    private readonly revealBlob: (key: string) => Promise<void>,
    private readonly kept?: KeptSessions,
  ) {
    super();
    this.register(service.onDidChange((e) => {
      for (const [key, panel] of this.panels) if (panel.local && (!e || e.full || e.changed.includes(key))) void panel.send();
    }));
    this.register({ dispose: () => [...this.panels.values()].forEach((p) => p.dispose()) });
  }

  /** The chart of a session the catalog holds. */
  show(sessionKey: string): void {
    const session = this.service.current()?.session(sessionKey) ?? this.kept?.get(sessionKey)?.session;
    this.open(new LocalChart(sessionKey, session ? sessionLabel(session) : 'session', this.service, this.revealBlob, this.kept), true);
  }

  /** The chart of a session read from elsewhere (a bucket); it is read again when opened again. */
  showSource(source: ChartSource): void {
    this.open(source, false);
  }

  private open(source: ChartSource, local: boolean): void {
    const existing = this.panels.get(source.key);
    if (existing) {
      existing.reveal();
      if (!local) void existing.send();
      return;
    }
    const panel = new ChartPanel(this.extensionUri, source, local, this.settings);
    this.panels.set(source.key, panel);
    panel.onDidDispose(() => this.panels.delete(source.key));
  }

  /** Re-send data to every open chart (a chart setting changed). */
  refreshAll(): void {
    for (const p of this.panels.values()) void p.send();
  }
}

/** A session of the catalog (or one kept after its files went), charted from its transcript. */
class LocalChart implements ChartSource {
  constructor(
    readonly key: string,
    readonly title: string,
    private readonly service: CatalogService,
    readonly revealBlob: (key: string) => Promise<void>,
    private readonly kept?: KeptSessions,
  ) {}

  async load(s: SpillwaySettings): Promise<HostToPage> {
    const catalog = await this.service.ready();
    const kept = this.kept?.get(this.key);
    const session = catalog?.session(this.key) ?? kept?.session;
    if (!catalog || !session) return { type: 'error', message: 'This session is gone.' };
    try {
      const series = (await catalog.turnsFor(this.key)) ?? kept?.series;
      return series
        ? { type: 'chartData', data: toChartData(session, series, { contextWindow: s.contextWindow, budgetDelta: s.budgetDelta }) }
        : { type: 'error', message: 'No transcript with token usage was found for this session.' };
    } catch (err) {
      return { type: 'error', message: `Cannot read the transcript: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
}

class ChartPanel extends Disposable {
  private readonly panel: vscode.WebviewPanel;
  private pageReady = false;
  readonly onDidDispose: vscode.Event<void>;

  constructor(
    extensionUri: vscode.Uri,
    private readonly source: ChartSource,
    /** Whether the catalog's changes redraw it. */
    readonly local: boolean,
    private readonly settings: () => SpillwaySettings,
  ) {
    super();
    const roots = [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')];
    this.panel = vscode.window.createWebviewPanel('spillway.chart', `Context: ${source.title}`, vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: roots });
    this.panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'spillway.svg');
    this.onDidDispose = this.panel.onDidDispose;
    this.panel.webview.html = chartHtml(this.panel.webview, extensionUri);
    this.register(this.panel.webview.onDidReceiveMessage((msg: unknown) => this.receive(msg)));
    this.register(this.panel.onDidDispose(() => this.dispose()));
  }

  reveal(): void {
    this.panel.reveal();
  }

  private async receive(msg: unknown): Promise<void> {
    if (!isPageToHost(msg)) return; // not ours: ignore rather than trust
    if (msg.type === 'ready') {
      this.pageReady = true;
      await this.send();
    } else if (msg.type === 'revealBlob') {
      await this.source.revealBlob(msg.blobId);
    }
  }

  async send(): Promise<void> {
    if (!this.pageReady) return;
    await this.panel.webview.postMessage(await this.source.load(this.settings()));
  }

  override dispose(): void {
    super.dispose();
    this.panel.dispose();
  }
}

function chartHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = randomBytes(16).toString('base64');
  const asset = (...p: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...p)).toString();
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset('dist', 'webview', 'chart.css')}">
<link rel="stylesheet" href="${asset('media', 'chart.css')}">
<title>Context chart</title>
</head>
<body>
<header id="header"><h1 id="title">Loading…</h1><p id="summary"></p><p id="saved"></p><p id="key"></p></header>
<main>
<div id="chart" role="img" aria-label="Prompt tokens per turn"></div>
<section id="details" aria-live="polite"></section>
<p id="message" hidden></p>
</main>
<script nonce="${nonce}" src="${asset('dist', 'webview', 'chart.js')}"></script>
</body>
</html>`;
}
