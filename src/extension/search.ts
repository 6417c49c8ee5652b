// The Search view: a results tree (session -> blob -> matching lines, the
// match highlighted) that stays until the next search or Clear, the way VS
// Code's own Search view works. Smart case by default; Match Case and Regex
// are view-title toggles (context keys pick which icon shows). Progress runs
// inside the view. The catalog's grep does the searching; remote roots are
// searched after the local blobs, within the same count.

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { BlobInfo, GrepMatch, GrepSummary, SessionInfo } from '../catalog/types';
import type { CatalogService } from './catalogService';
import { formatCount } from './format';
import type { LazyFacts } from './lazyFacts';
import { Disposable } from './lifecycle';
import { grepProgressMessage } from './messages';
import { findRipgrep } from './ripgrep';
import type { RemoteRoots } from './remoteModel';
import { RemoteHits, searchRemoteRoots, type RemoteHit } from './remoteSearch';
import { lineRow, matcherFor, searchSummary, SearchResults, type BlobResult, type SearchQuery, type SessionResult } from './searchModel';
import type { SpillwaySettings } from './settings';
import { blobIcon, blobLabel, sessionLabel, sessionName } from './treeModel';

export const SEARCH_VIEW = 'spillway.search';

/** The engine is asked for at most this many matches: enough to count past the caps, bounded for a 60 MB log. */
const COUNT_LIMIT = 20_000;

export type SearchNode =
  | { kind: 'session'; result: SessionResult }
  | { kind: 'blob'; result: BlobResult; session: SessionInfo }
  | { kind: 'line'; blob: BlobInfo; line: number; text: string }
  | { kind: 'more'; result: BlobResult };

export class SearchView extends Disposable implements vscode.TreeDataProvider<SearchNode> {
  private readonly changed = this.register(new vscode.EventEmitter<SearchNode | undefined | void>());
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<SearchNode>;
  private results: SearchResults | undefined;
  private matcher: RegExp | undefined;
  private abort: AbortController | undefined;
  /** The last search's matched blobs under remote roots. */
  private remoteHits = new RemoteHits();
  /** Toggles, kept between searches (and windows). */
  matchCase: boolean;
  regex: boolean;

  constructor(
    private readonly service: CatalogService,
    private readonly settings: () => SpillwaySettings,
    private readonly state: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
    private readonly facts: LazyFacts,
    private readonly remote?: RemoteRoots,
  ) {
    super();
    this.matchCase = state.get<boolean>('spillway.search.matchCase') ?? false;
    this.regex = state.get<boolean>('spillway.search.regex') ?? false;
    this.view = this.register(vscode.window.createTreeView(SEARCH_VIEW, { treeDataProvider: this, showCollapseAll: true }));
    void this.syncContext();
  }

  get query(): SearchQuery | undefined {
    return this.results?.query;
  }

  /** Asks for the text (the last one pre-filled), then searches. `scope`: one session. */
  async prompt(scope?: SessionInfo, given?: string): Promise<void> {
    const pattern =
      given ??
      (await vscode.window.showInputBox({
        title: `Search ${scope ? `the blobs of ${sessionLabel(scope)}` : 'all blobs'} (${this.regex ? 'regex' : 'text'}, ${this.matchCase ? 'match case' : 'smart case'})`,
        prompt: 'Text to find in spilled output. Toggle Match Case and Regex in the Search view title.',
        value: this.results?.query.pattern ?? '',
        validateInput: (v) => this.invalid(v),
      }));
    if (pattern === undefined || !pattern.trim()) return;
    await this.run({ pattern, regex: this.regex, matchCase: this.matchCase, ...(scope ? { sessionKey: scope.key } : {}) });
  }

  private invalid(pattern: string): string | undefined {
    if (!pattern) return undefined;
    try {
      matcherFor({ pattern, regex: this.regex, matchCase: this.matchCase });
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  async setToggle(which: 'matchCase' | 'regex', on: boolean): Promise<void> {
    this[which] = on;
    await this.state.update(`spillway.search.${which}`, on);
    await this.syncContext();
    // Like VS Code's Search view: a toggle searches again with the same text, where the focus is (a view title button
    // the user just clicked: a focus moved to the results later would close the palette they may have opened since).
    if (this.results) await this.run({ ...this.results.query, [which]: on }, false);
  }

  async rerun(): Promise<void> {
    if (this.results) await this.run(this.results.query);
    else await this.prompt();
  }

  cancel(): void {
    this.abort?.abort();
  }

  async clear(): Promise<void> {
    this.cancel();
    this.results = undefined;
    this.view.message = undefined;
    this.view.description = undefined;
    await this.syncContext();
    this.changed.fire();
  }

  /** Searches, showing the results in the view (`focus`: and moving the focus there). */
  async run(query: SearchQuery, focus = true): Promise<void> {
    const catalog = await this.service.ready();
    if (!catalog) throw new Error('the catalog is not available (see the Spillway output).');
    this.cancel();
    const abort = (this.abort = new AbortController());
    const matcher = matcherFor(query);
    const scope = query.sessionKey ? catalog.session(query.sessionKey) : undefined;
    const s = this.settings();
    const hits = (this.remoteHits = new RemoteHits());
    const results = new SearchResults(query, { perBlob: s.searchMaxPerBlob, total: s.searchMaxResults }, (p) => {
      const remote = hits.get(p);
      if (remote) return remote;
      const blob = catalog.blob(p);
      const session = blob && catalog.session(blob.sessionKey);
      if (blob) this.nameLater(blob);
      return blob && session ? { blob, session } : undefined;
    });
    this.results = results;
    this.matcher = matcher;
    this.view.description = scope ? `in ${sessionLabel(scope)}` : undefined;
    await this.syncContext(true);
    if (focus) await vscode.commands.executeCommand(`${SEARCH_VIEW}.focus`);
    const rgPath = findRipgrep(s.ripgrepPath, vscode.env.appRoot, (p) => fs.existsSync(p));
    let summary: GrepSummary | undefined;
    let last = 0;
    const redraw = (force = false) => {
      if (this.results !== results || (!force && Date.now() - last < 250)) return;
      last = Date.now();
      this.view.message = searchSummary(results, summary, summary === undefined);
      this.changed.fire();
    };
    try {
      summary = await vscode.window.withProgress({ location: { viewId: SEARCH_VIEW }, title: `Searching for "${query.pattern}"` }, async () => {
        const local = await catalog.grep(
          {
            pattern: query.pattern,
            regex: query.regex,
            ignoreCase: matcher.flags.includes('i'),
            maxResults: COUNT_LIMIT,
            ...(scope ? { paths: scope.blobs.filter((b) => !b.binary).map((b) => b.path) } : {}),
            ...(rgPath ? { rgPath } : {}),
          },
          (m) => {
            results.add(m);
            redraw();
          },
          abort.signal,
          (p) => {
            if (this.results === results) this.view.message = `${searchSummary(results, undefined, true)} (${grepProgressMessage(p.filesDone, p.filesTotal, p.matches)})`;
          },
        );
        // A search limited to a local session stays there.
        const roots = scope ? [] : (this.remote?.all() ?? []);
        if (roots.length === 0 || local.cancelled || local.matches >= COUNT_LIMIT) return local;
        const test = (line: string) => {
          matcher.lastIndex = 0;
          return matcher.test(line);
        };
        const add = (m: GrepMatch) => {
          results.add(m);
          redraw();
        };
        const remote = await searchRemoteRoots(roots, test, COUNT_LIMIT - local.matches, hits, add, () => abort.signal.aborted);
        return { ...local, matches: local.matches + remote.matches, truncated: local.truncated || remote.truncated, cancelled: abort.signal.aborted, errors: [...local.errors, ...remote.errors] };
      });
      if (summary.errors.length) this.log.warn(`search: ${summary.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
    } finally {
      if (this.abort === abort) this.abort = undefined;
      summary ??= { matches: results.found, truncated: false, cancelled: true, engine: 'node', errors: [] };
      redraw(true);
      await this.syncContext(false);
    }
  }

  /** An output nothing names is named by its head, as in the tree (read once, shared with it). */
  private nameLater(blob: BlobInfo): void {
    this.facts.fill([blob]);
    if (blob.tool || blob.args || blob.preview !== undefined || blob.binary) return;
    void this.service.current()?.preview(blob.key).then(
      () => {
        this.facts.record(blob);
        this.changed.fire();
      },
      () => undefined, // vanished: the next catalog event removes it
    );
  }

  private async syncContext(running?: boolean): Promise<void> {
    const set = (k: string, v: unknown) => vscode.commands.executeCommand('setContext', k, v);
    await Promise.all([
      set('spillway.search.matchCase', this.matchCase),
      set('spillway.search.regex', this.regex),
      set('spillway.search.hasResults', this.results !== undefined),
      ...(running !== undefined ? [set('spillway.search.running', running)] : []),
    ]);
  }

  // ---- TreeDataProvider ------------------------------------------------------

  getChildren(node?: SearchNode): SearchNode[] {
    const r = this.results;
    if (!r) return [];
    if (!node) return r.sessions.map((result) => ({ kind: 'session', result }));
    if (node.kind === 'session') return node.result.blobs.map((result) => ({ kind: 'blob', result, session: node.result.session }));
    if (node.kind === 'blob') {
      const lines: SearchNode[] = node.result.shown.map((m) => ({ kind: 'line', blob: node.result.blob, line: m.line, text: m.text }));
      if (node.result.shown.length < node.result.found) lines.push({ kind: 'more', result: node.result });
      return lines;
    }
    return [];
  }

  getTreeItem(node: SearchNode): vscode.TreeItem {
    const count = (n: number) => `${formatCount(n)} match${n === 1 ? '' : 'es'}`;
    switch (node.kind) {
      case 'session': {
        const item = new vscode.TreeItem(sessionName(node.result.session, Date.now()), vscode.TreeItemCollapsibleState.Expanded);
        item.description = count(node.result.found);
        item.iconPath = new vscode.ThemeIcon('history');
        item.id = `search:${node.result.session.key}`;
        return item;
      }
      case 'blob': {
        const { blob, found, shown } = node.result;
        const item = new vscode.TreeItem(blobLabel(blob), vscode.TreeItemCollapsibleState.Expanded);
        item.description = shown.length < found ? `${count(found)} (first ${formatCount(shown.length)})` : count(found);
        item.iconPath = new vscode.ThemeIcon(blobIcon(blob));
        item.tooltip = `${blob.path}\n${item.description}`;
        item.id = `search:${blob.key}`;
        item.contextValue = 'spillway:searchBlob';
        return item;
      }
      case 'line': {
        const row = lineRow(node, this.matcher ?? /$^/g);
        const item = new vscode.TreeItem({ label: row.label, highlights: row.highlights }, vscode.TreeItemCollapsibleState.None);
        item.tooltip = `${node.line}: ${node.text}`;
        item.id = lineId(node);
        item.contextValue = 'spillway:searchLine';
        item.command = { command: 'spillway.search.open', title: 'Open at the Match', arguments: [node] };
        return item;
      }
      case 'more': {
        const hidden = node.result.found - node.result.shown.length;
        const item = new vscode.TreeItem(`${formatCount(hidden)} more not shown`, vscode.TreeItemCollapsibleState.None);
        item.description = `at most ${formatCount(this.results?.caps.perBlob ?? 0)} per blob`;
        item.iconPath = new vscode.ThemeIcon('ellipsis');
        item.id = `search:${node.result.blob.key}:more`;
        return item;
      }
    }
  }

  /** The line last opened as a preview, by id: activated again while selected, it opens pinned. */
  private previewed: string | undefined;

  /** How a line's activation opens it: a preview the first time, pinned when the previewed, selected line is activated again. */
  activate(node: Extract<SearchNode, { kind: 'line' }>): 'preview' | 'pinned' {
    const id = lineId(node);
    const selected = this.view.selection[0];
    const again = this.previewed === id && selected?.kind === 'line' && lineId(selected) === id;
    this.previewed = again ? undefined : id;
    return again ? 'pinned' : 'preview';
  }

  /** A matched blob under a remote root, by URL. */
  remoteHit(url: string): RemoteHit | undefined {
    return this.remoteHits.get(url);
  }

  /** The match to select when a line opens. */
  matcherForOpen(): RegExp | undefined {
    return this.matcher;
  }
}

function lineId(node: Extract<SearchNode, { kind: 'line' }>): string {
  return `search:${node.blob.key}:${node.line}`;
}
