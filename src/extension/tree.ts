// The Spills tree: maps treeModel nodes to TreeItems. Owns its EventEmitter;
// catalog changes are coalesced into one redraw per burst, which announces only
// the rows that changed (shownNodes.ts). Line counts and tooltips are filled
// lazily (on expand / on hover).

import * as vscode from 'vscode';
import type { BlobInfo, SessionInfo } from '../catalog/types';
import type { CatalogService } from './catalogService';
import { blobUri } from './blobFileSystem';
import type { KeptSessions } from './keptSessions';
import { LazyFacts } from './lazyFacts';
import { ShownNodes } from './shownNodes';
import { coalesce, Disposable } from './lifecycle';
import { isRemoteNode, remoteChildren, remoteParent, remoteTopNodes, type RemoteNode, type RemoteRoots } from './remoteModel';
import { remoteTreeItem } from './remoteTree';
import {
  agentDescription,
  blobIcon,
  blobRow,
  blobTooltipMarkdown,
  buildTree,
  contextValue,
  limitShowing,
  moreRow,
  nodeId,
  page,
  PAGE,
  sessionAge,
  sessionChildren,
  sessionNode,
  sessionRow,
  sessionTooltipParagraphs,
  sourceLabel,
  twinSessions,
  type AgentNode,
  type BlobNode,
  type MoreNode,
  type SessionNode,
  type SortOrder,
  type SpillNode,
  type TreeFilter,
} from './treeModel';

export class SpillTreeProvider extends Disposable implements vscode.TreeDataProvider<SpillNode> {
  private readonly changed = this.register(new vscode.EventEmitter<SpillNode | SpillNode[] | undefined | void>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly refreshSoon = this.register(coalesce(() => this.redraw(), 100));

  filter: TreeFilter = {};
  sort: SortOrder = 'time';
  /** How many rows each agent or session lists (PAGE until its "Show more" row is chosen), by node id; kept across refreshes. */
  private readonly listed = new Map<string, number>();

  /** The s3:// roots shown below the local agents (none until the container sets them). */
  remote: RemoteRoots | undefined;

  /** The agent and session nodes VS Code holds; undefined until the tree's top was first asked for. */
  private shown: ShownNodes | undefined;

  constructor(
    private readonly service: CatalogService,
    private readonly previewBytes: () => number,
    private readonly kept?: KeptSessions,
    private readonly isPinned: (file: string) => boolean = () => false,
    /** Line counts and heads read for listed blobs, given back to the blobs of a new catalog (Refresh). */
    private readonly facts = new LazyFacts(),
  ) {
    super();
    this.register(service.onDidChange(() => this.refreshSoon.schedule()));
    // Session rows show their age ("3 min ago"): redraw when one would read differently.
    const tick = setInterval(() => this.refreshIfAgesChanged(), 60_000);
    this.register({ dispose: () => clearInterval(tick) });
  }

  private shownAges = '';
  /** Sessions another of their agent's reads the same as (their rows add the short id). */
  private twins = new Set<string>();

  private refreshIfAgesChanged(): void {
    const now = Date.now();
    const ages = (this.service.current()?.sessions() ?? []).map((s) => sessionAge(s.updatedAt, now)).join('|');
    if (ages !== this.shownAges) this.changed.fire();
    this.shownAges = ages;
  }

  refresh(): void {
    this.changed.fire();
  }

  /** The catalog's sessions and the emptied ones kept for their chart. */
  private allSessions(listed: SessionInfo[]): SessionInfo[] {
    return this.kept ? [...listed, ...this.kept.list(new Set(listed.map((s) => s.key)))] : listed;
  }

  /** The tree as the catalog holds it now (agents, their sessions counted; no blob listed). */
  private agentsNow(sessions: SessionInfo[]): AgentNode[] {
    this.facts.keepOnly(new Set(sessions.flatMap((x) => x.blobs.map((b) => b.key))));
    const all = this.allSessions(sessions);
    this.twins = twinSessions(all, Date.now());
    return buildTree(all, this.filter, this.sort);
  }

  /**
   * A catalog change (the check correcting the index's rows, a live update): only the rows that changed are
   * announced, on the nodes VS Code holds, so the others are not drawn again.
   */
  private redraw(): void {
    const catalog = this.service.current();
    if (!catalog || !this.shown) return this.changed.fire();
    const change = this.shown.update(this.agentsNow(catalog.sessions()));
    if (change === 'all') this.changed.fire();
    else if (change.length) this.changed.fire(change);
  }

  async getChildren(node?: SpillNode): Promise<SpillNode[]> {
    if (!node) {
      const remote = this.remote ? remoteTopNodes(this.remote) : [];
      const catalog = await this.service.ready();
      if (!catalog) {
        this.service.rowsShown();
        return remote;
      }
      this.shown ??= new ShownNodes((s) => (this.twins.has(s.key) ? 'twin' : ''));
      const agents = this.shown.adopt(this.agentsNow(catalog.sessions()));
      if (agents.length === 0) this.service.rowsShown();
      return [...agents, ...remote];
    }
    if (isRemoteNode(node)) {
      const firstPage = node.kind === 'remote-root' && !node.root.loaded;
      const children = await remoteChildren(node);
      // The root's own row counts what its first page listed: redraw it (its children are listed now, once).
      if (firstPage) this.changed.fire(node);
      return children;
    }
    if (node.kind === 'agent') {
      // The first rows are on their way to the screen: the check of the index may start (see CatalogService).
      this.service.rowsShown();
      return page(node, node.sessions, this.limit(node));
    }
    if (node.kind === 'session') {
      const rows = page(node, sessionChildren(node.session, this.filter, this.sort).map((blob): BlobNode => ({ kind: 'blob', blob, session: node.session })), this.limit(node));
      // Only the rows listed: a session of 100,000 blobs is not read whole when it is expanded.
      this.countLinesLater(node, rows.flatMap((r) => (r.kind === 'blob' ? [r.blob] : [])));
      return rows;
    }
    return [];
  }

  private limit(parent: MoreNode['parent']): number {
    return this.listed.get(nodeId(parent)) ?? PAGE;
  }

  /** List the next page of a parent's rows (its "Show more" row). */
  showMore(node: MoreNode): void {
    this.listed.set(nodeId(node.parent), this.limit(node.parent) + PAGE);
    this.changed.fire();
  }

  /**
   * List enough rows that a blob's is there, before a reveal: its session among its agent's, the blob among its
   * session's. VS Code finds a revealed row among its parent's children; the change is fired at once, and a reveal
   * waits for the refresh it starts.
   */
  showBlob(node: BlobNode): void {
    const agent = this.agentOf(node.session.source);
    if (!agent) return;
    const wanted: Array<[MoreNode['parent'], number]> = [
      [agent, agent.sessions.findIndex((n) => n.session.key === node.session.key)],
      [sessionNode(node.session, this.filter), sessionChildren(node.session, this.filter, this.sort).findIndex((b) => b.key === node.blob.key)],
    ];
    let more = false;
    for (const [parent, index] of wanted) {
      const limit = this.limit(parent);
      const needed = limitShowing(index, limit);
      if (needed === limit) continue;
      this.listed.set(nodeId(parent), needed);
      more = true;
    }
    if (more) this.changed.fire();
  }

  /** A remote root's next page of sessions (its "Show more" row), or all its pages again. */
  async loadRemote(node: RemoteNode, again = false): Promise<void> {
    if (again) node.root.reset();
    await node.root.loadMore();
    this.changed.fire();
  }

  getTreeItem(node: SpillNode): vscode.TreeItem {
    const now = Date.now();
    if (isRemoteNode(node)) return remoteTreeItem(node);
    switch (node.kind) {
      case 'agent': {
        const item = new vscode.TreeItem(sourceLabel(node.source), vscode.TreeItemCollapsibleState.Expanded);
        item.description = agentDescription(node.sessions);
        item.iconPath = new vscode.ThemeIcon('hubot');
        return this.finish(item, node);
      }
      case 'session': {
        const row = sessionRow(node, now, this.twins.has(node.session.key));
        const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.Collapsed);
        item.description = row.description;
        item.iconPath = new vscode.ThemeIcon('history');
        item.tooltip = sessionTooltip(node.session, now);
        // Titles repeat across sessions: the spoken label carries the session id too.
        item.accessibilityInformation = { label: `${row.label}, ${row.description}, ${sourceLabel(node.session.source)} session ${node.session.id}` };
        return this.finish(item, node);
      }
      case 'blob': {
        const row = blobRow(node.blob, this.isPinned(node.blob.path));
        const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
        item.description = row.description;
        item.iconPath = new vscode.ThemeIcon(blobIcon(node.blob));
        item.resourceUri = blobUri(node.blob.path);
        item.command = { command: 'spillway.openBlob', title: 'Open Blob', arguments: [node] };
        item.accessibilityInformation = { label: `${row.description}, ${row.label}, file ${node.blob.name}` };
        return this.finish(item, node);
      }
      case 'more': {
        const row = moreRow(node);
        const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
        item.description = row.description;
        item.tooltip = row.tooltip;
        item.iconPath = new vscode.ThemeIcon('ellipsis');
        item.command = { command: 'spillway.showMore', title: 'Show More', arguments: [node] };
        return this.finish(item, node);
      }
    }
  }

  private finish(item: vscode.TreeItem, node: SpillNode): vscode.TreeItem {
    item.id = nodeId(node);
    item.contextValue = contextValue(node, node.kind === 'blob' && this.isPinned(node.blob.path));
    return item;
  }

  getParent(node: SpillNode): SpillNode | undefined {
    const catalog = this.service.current();
    if (isRemoteNode(node)) return remoteParent(node);
    if (!catalog || node.kind === 'agent') return undefined;
    // The objects VS Code holds where there are some: it registers what this returns under the row's id.
    if (node.kind === 'blob') {
      return this.shown?.session(node.session.key) ?? sessionNode(node.session, this.filter);
    }
    if (node.kind === 'more') return node.parent;
    return this.shown?.agent(node.session.source) ?? this.agentOf(node.session.source);
  }

  /** An agent's row as the tree builds it now (its sessions filtered and sorted). */
  private agentOf(source: string): AgentNode | undefined {
    const catalog = this.service.current();
    return catalog && buildTree(this.allSessions(catalog.sessions()), this.filter, this.sort).find((a) => a.source === source);
  }

  async resolveTreeItem(item: vscode.TreeItem, node: SpillNode, token: vscode.CancellationToken): Promise<vscode.TreeItem> {
    if (node.kind !== 'blob') return item;
    const catalog = this.service.current();
    let preview: string | undefined;
    try {
      preview = catalog ? (await catalog.preview(node.blob.key)).preview : undefined;
    } catch {
      preview = undefined; // vanished or unreadable: the card still shows the facts
    }
    if (token.isCancellationRequested) return item;
    const md = new vscode.MarkdownString(blobTooltipMarkdown(node.blob, node.session, preview, this.previewBytes()));
    md.isTrusted = false;
    md.supportHtml = false;
    item.tooltip = md;
    return item;
  }

  /** Node for a blob key (for reveal from the chart or after a grep). */
  blobNode(key: string): BlobNode | undefined {
    const catalog = this.service.current();
    const blob = catalog?.blob(key);
    const session = blob && catalog?.session(blob.sessionKey);
    return blob && session ? { kind: 'blob', blob, session } : undefined;
  }

  /**
   * Line counts, and the first line that names an unattributed output, read once a session is expanded; what was
   * read before for the same file version is given back at once (the blobs of a new catalog after Refresh).
   */
  private countLinesLater(node: SessionNode, blobs: BlobInfo[]): void {
    const todo = this.facts.fill(blobs);
    if (!todo.length) return;
    for (const b of todo) this.facts.tried(b);
    void (async () => {
      const catalog = this.service.current();
      for (const b of todo) {
        try {
          if (!b.tool && !b.args) await catalog?.preview(b.key);
          if (b.lines === undefined && !b.binary) await catalog?.countLines(b.path);
        } catch {
          // vanished: the next catalog event removes it
        }
        this.facts.record(catalog?.blob(b.key) ?? b);
      }
      this.changed.fire(node);
    })();
  }
}

function sessionTooltip(session: SessionInfo, now: number): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.isTrusted = false;
  md.appendText(sessionTooltipParagraphs(session, now).join('\n\n'));
  return md;
}
