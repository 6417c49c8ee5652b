// Every command of the extension. Handlers take the tree node they were
// invoked on (menus, clicks) and fall back to the tree's selection, so the
// same command works from the command palette.

import * as path from 'node:path';
import * as vscode from 'vscode';
import type { BlobInfo, CleanPlan, CleanRequest, SessionInfo, TurnSeries } from '../catalog/types';
import type { Catalog } from '../catalog/catalog';
import type { CatalogService } from './catalogService';
import type { ChartPanels } from './chartPanel';
import type { AutoCleanup } from './autoCleanup';
import { blobUri } from './blobFileSystem';
import type { KeptSessions } from './keptSessions';
import { formatBytes } from './format';
import { deleteRemoteSession, openRemoteBlob, remoteChart } from './remoteTree';
import { parseLineRange, validateLineRange, type LineRange } from './lineRange';
import { cleanResultMessage, confirmCleanMessage, deleteMode, type DeleteMode, parseRetention, retentionPhrase } from './messages';
import type { SearchNode, SearchView } from './search';
import { matchRanges } from './searchModel';
import type { SpillwaySettings } from './settings';
import { SliceDocumentProvider } from './sliceDocument';
import type { SpillTreeProvider } from './tree';
import { blobLabel, describeFilter, EDITOR_LIMIT_BYTES, isFilterActive, parseFilter, sessionLabel, type BlobNode, type MoreNode, type SpillNode } from './treeModel';

export interface CommandDeps {
  service: CatalogService;
  tree: SpillTreeProvider;
  view: vscode.TreeView<SpillNode>;
  charts: ChartPanels;
  kept: KeptSessions;
  search: SearchView;
  auto: AutoCleanup;
  settings: () => SpillwaySettings;
  log: vscode.LogOutputChannel;
  setContext: (key: string, value: unknown) => Thenable<unknown>;
  saveSort: (sort: 'time' | 'size') => Thenable<void>;
}

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const c = new Commands(deps);
  const table: Record<string, (...args: never[]) => unknown> = {
    'spillway.refresh': () => c.refresh(),
    'spillway.filter': () => c.filter(),
    'spillway.clearFilter': () => c.setFilter(''),
    'spillway.sortBySize': () => c.setSort('size'),
    'spillway.sortByTime': () => c.setSort('time'),
    'spillway.openBlob': (n?: SpillNode) => c.openBlob(n),
    'spillway.openAtLineRange': (n?: SpillNode, range?: string) => (n?.kind === 'remote-blob' ? openRemoteBlob(n, range, true) : c.openAtLineRange(n, range)),
    'spillway.openRemoteBlob': (n?: SpillNode, range?: string) => n?.kind === 'remote-blob' && openRemoteBlob(n, range),
    'spillway.remoteShowMore': (n?: SpillNode) => n?.kind === 'remote-note' && deps.tree.loadRemote(n),
    'spillway.grep': (n?: SpillNode, pattern?: string) => c.grep(n, pattern),
    'spillway.search.open': (n?: SearchNode) => c.openMatch(n),
    'spillway.search.matchCaseOn': () => deps.search.setToggle('matchCase', true),
    'spillway.search.matchCaseOff': () => deps.search.setToggle('matchCase', false),
    'spillway.search.regexOn': () => deps.search.setToggle('regex', true),
    'spillway.search.regexOff': () => deps.search.setToggle('regex', false),
    'spillway.search.rerun': () => deps.search.rerun(),
    'spillway.search.cancel': () => deps.search.cancel(),
    'spillway.search.clear': () => deps.search.clear(),
    'spillway.deleteBlob': (n?: SpillNode, all?: SpillNode[]) => c.deleteBlobs(n, all),
    'spillway.deleteSession': (n?: SpillNode) => (n?.kind === 'remote-session' ? deleteRemoteSession(n, () => deps.tree.loadRemote(n, true)) : c.deleteSession(n)),
    'spillway.cleanUp': () => c.cleanUp(),
    'spillway.pinBlob': (n?: SpillNode, all?: SpillNode[]) => c.pin(n, all, true),
    'spillway.unpinBlob': (n?: SpillNode, all?: SpillNode[]) => c.pin(n, all, false),
    'spillway.runAutoCleanup': () => deps.auto.run('settings'),
    'spillway.revealInOS': (n?: SpillNode) => c.revealInOS(n),
    'spillway.revealInExplorer': (n?: SpillNode) => c.revealInExplorer(n),
    'spillway.copyPath': (n?: SpillNode) => c.copyPath(n),
    'spillway.showChart': (n?: SpillNode) => (n?.kind === 'remote-session' ? deps.charts.showSource(remoteChart(n)) : c.showChart(n)),
    'spillway.addFolder': () => c.addFolder(),
    'spillway.showRoots': () => c.showRoots(),
    'spillway.revealBlob': (key: string) => c.revealBlob(key),
    // The row's own argument; run otherwise (a key bound to it), there is nothing to list more of.
    'spillway.showMore': (n?: MoreNode) => n?.kind === 'more' && deps.tree.showMore(n),
  };
  for (const [id, handler] of Object.entries(table)) {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await (handler as (...a: unknown[]) => unknown)(...args);
        } catch (err) {
          deps.log.error(`${id}: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
          void vscode.window.showErrorMessage(`Spillway: ${err instanceof Error ? err.message : String(err)}`);
          return undefined;
        }
      }),
    );
  }
}

class Commands {
  /** Set once a trash attempt failed: stop offering it. */
  private trashFailed = false;

  constructor(private readonly d: CommandDeps) {}

  private async catalog(): Promise<Catalog> {
    const catalog = await this.d.service.ready();
    if (!catalog) throw new Error('the catalog is not available (see the Spillway output).');
    return catalog;
  }

  // ---- resolving what a command applies to ---------------------------------

  private async pickBlob(node: SpillNode | undefined): Promise<BlobNode | undefined> {
    const n = node ?? this.d.view.selection[0];
    if (n?.kind === 'blob') return n;
    const catalog = await this.catalog();
    const sessions = n?.kind === 'session' ? [n.session] : catalog.sessions();
    const items = sessions.flatMap((s) => s.blobs.map((b) => ({ label: blobLabel(b), description: formatBytes(b.bytes), detail: b.path, node: { kind: 'blob' as const, blob: b, session: s } })));
    const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Choose a blob', matchOnDetail: true });
    return pick?.node;
  }

  private async pickSession(node: SpillNode | undefined): Promise<SessionInfo | undefined> {
    const n = node ?? this.d.view.selection[0];
    if (n?.kind === 'session') return n.session;
    if (n?.kind === 'blob') return n.session;
    const catalog = await this.catalog();
    const items = catalog.sessions().map((s) => ({ label: sessionLabel(s), description: `${s.blobs.length} blobs · ${formatBytes(s.bytes)}`, detail: s.dir, session: s }));
    // Matched on the folder too: titles repeat (a prompt used again, sessions named by their working folder), ids do not.
    return (await vscode.window.showQuickPick(items, { placeHolder: 'Choose a session', matchOnDetail: true }))?.session;
  }

  // ---- view ----------------------------------------------------------------

  async refresh(): Promise<void> {
    this.d.tree.remote?.resetAll();
    await this.d.service.reload();
    this.d.tree.refresh();
  }

  async filter(): Promise<void> {
    const value = await vscode.window.showInputBox({
      title: 'Filter spills',
      prompt: 'Text to match, tool:NAME, >SIZE (e.g. "tool:Bash >100KB error"). Empty clears the filter.',
      value: describeFilter(this.d.tree.filter).replace(/"/g, ''),
      validateInput: (v) => ('error' in parseFilter(v) ? (parseFilter(v) as { error: string }).error : undefined),
    });
    if (value !== undefined) await this.setFilter(value);
  }

  async setFilter(value: string): Promise<void> {
    const parsed = parseFilter(value);
    if ('error' in parsed) return;
    this.d.tree.filter = parsed.filter;
    const active = isFilterActive(parsed.filter);
    // A message spans the view's width; a description would be cut by the title buttons.
    this.d.view.message = active ? `Filter: ${describeFilter(parsed.filter)} (Clear Filter to show all)` : undefined;
    await this.d.setContext('spillway.filtered', active);
    this.d.tree.refresh();
  }

  async setSort(sort: 'time' | 'size'): Promise<void> {
    this.d.tree.sort = sort;
    await this.d.setContext('spillway.sort', sort);
    await this.d.saveSort(sort);
    this.d.tree.refresh();
  }

  async revealBlob(key: string): Promise<void> {
    await this.catalog();
    const node = this.d.tree.blobNode(key);
    if (!node) {
      void vscode.window.showWarningMessage('That blob is no longer there.');
      return;
    }
    // Its session may lie past the sessions its agent lists (a chart opened from the command palette on any session).
    this.d.tree.showBlob(node);
    await vscode.commands.executeCommand('spillway.spills.focus');
    await this.d.view.reveal(node, { select: true, focus: true, expand: true });
  }

  // ---- open ----------------------------------------------------------------

  async openBlob(node?: SpillNode): Promise<void> {
    const n = await this.pickBlob(node);
    if (!n) return;
    if (n.blob.bytes > EDITOR_LIMIT_BYTES) {
      await this.openRange(n.blob, { start: 1, end: 2000 });
      return;
    }
    // Opened from its row (a click, Enter): a preview that leaves the focus in the tree, as the Explorer does,
    // so the keys of the view (Ctrl+G, Delete) still apply to the blob.
    await vscode.window.showTextDocument(blobUri(n.blob.path), { preview: true, preserveFocus: node !== undefined });
  }

  async openAtLineRange(node?: SpillNode, input?: string): Promise<void> {
    const n = await this.pickBlob(node);
    if (!n) return;
    const catalog = await this.catalog();
    const total = n.blob.lines ?? (await catalog.countLines(n.blob.path).catch(() => undefined));
    const text =
      input ??
      (await vscode.window.showInputBox({
        title: `Open ${blobLabel(n.blob)} at lines…`,
        prompt: total !== undefined ? `The blob has ${total} lines. Type START-END, e.g. 120-180.` : 'Type START-END, e.g. 120-180.',
        placeHolder: '120-180',
        validateInput: (v) => validateLineRange(v, total),
      }));
    if (text === undefined) return;
    const parsed = parseLineRange(text, total);
    if (!parsed.ok) throw new Error(parsed.message);
    await this.openRange(n.blob, parsed.range);
  }

  /** Editor with the range selected and revealed; a slice document for blobs too big for an editor. */
  async openRange(blob: BlobInfo, range: LineRange, focusLine?: number): Promise<void> {
    if (blob.bytes > EDITOR_LIMIT_BYTES) {
      const doc = await vscode.workspace.openTextDocument(SliceDocumentProvider.uri(blob.path, range));
      const h = SliceDocumentProvider.headerLines;
      const last = Math.min(doc.lineCount - 1, h + (range.end - range.start));
      const sel = focusLine !== undefined
        ? doc.lineAt(Math.min(doc.lineCount - 1, h + focusLine - range.start)).range
        : new vscode.Range(h, 0, last, doc.lineAt(last).range.end.character);
      const editor = await vscode.window.showTextDocument(doc, { preview: true, selection: sel });
      editor.revealRange(sel, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      return;
    }
    const doc = await vscode.workspace.openTextDocument(blobUri(blob.path));
    // A final newline leaves an empty last editor line that is no line of the blob.
    const lines = doc.lineCount - (doc.lineCount > 1 && doc.lineAt(doc.lineCount - 1).text === '' ? 1 : 0);
    if (range.start > lines) throw new Error(`the blob has ${lines} lines; line ${range.start} is past its end.`);
    if (range.end > lines) void vscode.window.showWarningMessage(`The blob has ${lines} lines: showing ${range.start}-${lines}, not up to ${range.end}.`);
    const endLine = Math.min(doc.lineCount - 1, range.end - 1);
    const startLine = Math.min(endLine, range.start - 1);
    const sel = new vscode.Range(startLine, 0, endLine, doc.lineAt(endLine).range.end.character);
    const editor = await vscode.window.showTextDocument(doc, { preview: true, selection: sel });
    editor.revealRange(sel, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  // ---- grep ----------------------------------------------------------------

  async grep(node?: SpillNode, given?: string): Promise<void> {
    const n = node ?? (this.d.view.visible ? this.d.view.selection[0] : undefined);
    await this.d.search.prompt(n?.kind === 'session' ? n.session : undefined, given);
  }

  /**
   * A Search view line: the blob opened (read-only) with the match on that line selected. As in VS Code's own
   * Search view, the first activation (a click, Enter on a row) previews it and keeps the focus in the results;
   * activating the previewed row again (Enter on it, a double-click) opens it pinned, the focus in the editor.
   */
  async openMatch(node: SearchNode | undefined): Promise<void> {
    const n = node ?? this.d.search.view.selection[0];
    if (n?.kind !== 'line') return;
    const pinned = this.d.search.activate(n) === 'pinned';
    const remote = this.d.search.remoteHit(n.blob.path);
    if (remote) {
      await openRemoteBlob(remote.node, `${Math.max(1, n.line - 100)}-${n.line + 100}`, false, n.line);
      return;
    }
    const catalog = await this.catalog();
    const blob = catalog.blob(n.blob.key);
    if (!blob) throw new Error('the blob is gone');
    const line = n.line;
    if (blob.bytes > EDITOR_LIMIT_BYTES) {
      await this.openRange(blob, { start: Math.max(1, line - 100), end: line + 100 }, line);
      return;
    }
    const doc = await vscode.workspace.openTextDocument(blobUri(blob.path));
    const at = Math.min(doc.lineCount - 1, line - 1);
    const text = doc.lineAt(at).text;
    const re = this.d.search.matcherForOpen();
    const [start, end] = (re && matchRanges(text, re)[0]) ?? [0, text.length];
    const sel = new vscode.Range(at, start, at, end);
    const editor = await vscode.window.showTextDocument(doc, { preview: !pinned, preserveFocus: !pinned, selection: sel });
    editor.revealRange(sel, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  // ---- delete --------------------------------------------------------------

  async deleteBlobs(node?: SpillNode, all?: SpillNode[]): Promise<void> {
    const given = all?.length ? all : node ? [node] : [...this.d.view.selection];
    const chosen = given.filter((n): n is BlobNode => n.kind === 'blob');
    // The Delete key on a session row.
    if (!chosen.length && given[0]?.kind === 'session') return this.deleteSession(given[0]);
    const blobs = chosen.length ? chosen : [await this.pickBlob(undefined)].filter((n): n is BlobNode => Boolean(n));
    if (!blobs.length) return;
    const what = blobs.length === 1 ? `of "${blobLabel(blobs[0]!.blob)}"` : 'of the selection';
    await this.clean({ kind: 'blobs', paths: blobs.map((b) => b.blob.path) }, what);
  }

  /** Pinned blobs are never deleted by the automatic cleanup (nor by `spillway clean --policy`). */
  async pin(node: SpillNode | undefined, all: SpillNode[] | undefined, pinned: boolean): Promise<void> {
    const given = all?.length ? all : node ? [node] : [...this.d.view.selection];
    const blobs = given.filter((n): n is BlobNode => n.kind === 'blob');
    const chosen = blobs.length ? blobs : [await this.pickBlob(undefined)].filter((n): n is BlobNode => Boolean(n));
    if (chosen.length) await this.d.auto.setPinned(chosen.map((b) => b.blob.path), pinned);
  }

  async deleteSession(node?: SpillNode): Promise<void> {
    const session = await this.pickSession(node);
    if (!session) return;
    if (!session.blobs.length) {
      void vscode.window.showInformationMessage('This session has no blobs left (it stays listed for its chart while its transcript is there).');
      return;
    }
    await this.clean({ kind: 'session', sessionKey: session.key }, `of session "${sessionLabel(session)}"`);
  }

  async cleanUp(): Promise<void> {
    const presets = [
      { label: 'Older than 7 days', value: '7d' },
      { label: 'Older than 30 days', value: '30d' },
      { label: 'Keep the newest 1 GB, delete the rest', value: '1GB' },
      { label: 'Custom…', value: '' },
    ];
    const pick = await vscode.window.showQuickPick(presets, { title: 'Clean up spilled output', placeHolder: 'Which blobs to delete' });
    if (!pick) return;
    const value =
      pick.value ||
      (await vscode.window.showInputBox({
        title: 'Clean up',
        prompt: 'An age (7d, 12h, 30m) deletes older blobs; a size (2GB) keeps the newest up to that total.',
        validateInput: (v) => ('error' in parseRetention(v) ? (parseRetention(v) as { error: string }).error : undefined),
      }));
    if (!value) return;
    const r = parseRetention(value);
    if ('error' in r) throw new Error(r.error);
    await this.clean({ kind: 'retention', ...r }, retentionPhrase(r));
  }

  private async clean(request: CleanRequest, what: string): Promise<void> {
    const catalog = await this.catalog();
    const plan = await catalog.planClean(request);
    if (plan.items.length === 0) {
      const why = plan.refused.length ? ` (${plan.refused.length} refused: ${plan.refused[0]?.reason})` : '';
      void vscode.window.showInformationMessage(`Nothing to delete${why}.`);
      return;
    }
    const mode = deleteMode(this.d.settings().useTrash, {
      remote: vscode.env.remoteName !== undefined,
      web: vscode.env.uiKind === vscode.UIKind.Web,
      trashFailed: this.trashFailed,
    });
    const m = confirmCleanMessage(plan, what, mode);
    const answer = await vscode.window.showWarningMessage(m.message, { modal: true, detail: m.detail }, m.action);
    if (answer !== m.action) return;
    await this.execute(catalog, plan, mode, what);
  }

  private async execute(catalog: Catalog, plan: CleanPlan, mode: DeleteMode, what: string): Promise<void> {
    const emptied = await this.sessionsEmptiedBy(catalog, plan);
    let trashMissing = false;
    const trash =
      mode === 'trash'
        ? async (p: string) => {
            try {
              await vscode.workspace.fs.delete(vscode.Uri.file(p), { useTrash: true, recursive: false });
            } catch (err) {
              trashMissing = true;
              throw err;
            }
          }
        : undefined;
    const result = await catalog.executeClean(plan, trash ? { trash } : {});
    for (const e of emptied) if (!catalog.session(e.session.key)) await this.d.kept.keep(e.session, e.series);
    this.d.tree.refresh();
    if (trashMissing && result.failed.length) {
      // A desktop window whose trash failed: the one case left for a second question.
      this.trashFailed = true;
      const items = plan.items.filter((i) => result.failed.some((f) => f.path === i.path));
      const left: CleanPlan = { ...plan, items, bytes: items.reduce((n, i) => n + i.bytes, 0), refused: [] };
      const m = confirmCleanMessage(left, what, 'no-trash');
      const again = await vscode.window.showWarningMessage(`Moving to the trash failed. ${m.message}`, { modal: true, detail: m.detail }, m.action);
      if (again === m.action) await this.execute(catalog, left, 'no-trash', what);
      return;
    }
    void vscode.window.showInformationMessage(cleanResultMessage(result, mode === 'trash'));
  }

  /** Sessions with a transcript that the plan leaves without blobs, with their turns read while they can be. */
  private async sessionsEmptiedBy(catalog: Catalog, plan: CleanPlan): Promise<Array<{ session: SessionInfo; series: TurnSeries | undefined }>> {
    const planned = new Set(plan.items.map((i) => i.path));
    const out: Array<{ session: SessionInfo; series: TurnSeries | undefined }> = [];
    for (const key of new Set(plan.items.map((i) => i.sessionKey))) {
      const session = catalog.session(key);
      if (!session?.transcript || !session.blobs.every((b) => planned.has(b.path))) continue;
      out.push({ session, series: await catalog.turnsFor(key).catch(() => undefined) });
    }
    return out;
  }

  // ---- misc ----------------------------------------------------------------

  private async pathOf(node?: SpillNode): Promise<string | undefined> {
    const n = node ?? this.d.view.selection[0];
    if (n?.kind === 'blob') return n.blob.path;
    if (n?.kind === 'session') return n.session.dir;
    return (await this.pickBlob(undefined))?.blob.path;
  }

  async revealInOS(node?: SpillNode): Promise<void> {
    const p = await this.pathOf(node);
    if (p) await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(p));
  }

  async revealInExplorer(node?: SpillNode): Promise<void> {
    const p = await this.pathOf(node);
    if (!p) return;
    const uri = vscode.Uri.file(p);
    if (vscode.workspace.getWorkspaceFolder(uri)) {
      await vscode.commands.executeCommand('revealInExplorer', uri);
      return;
    }
    const add = 'Add Folder to Workspace';
    const folder = node?.kind === 'session' ? p : path.dirname(p);
    const answer = await vscode.window.showInformationMessage(`${folder} is not in the workspace.`, add);
    if (answer === add) {
      vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders?.length ?? 0, 0, { uri: vscode.Uri.file(folder) });
    }
  }

  async copyPath(node?: SpillNode): Promise<void> {
    const p = await this.pathOf(node);
    if (!p) return;
    await vscode.env.clipboard.writeText(p);
    vscode.window.setStatusBarMessage(`Copied ${p}`, 3000);
  }

  async showChart(node?: SpillNode): Promise<void> {
    const session = await this.pickSession(node);
    if (session) this.d.charts.show(session.key);
  }

  async addFolder(): Promise<void> {
    const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: true, openLabel: 'Add to Spillway' });
    if (!picked?.length) return;
    const config = vscode.workspace.getConfiguration('spillway');
    const roots = new Set(config.get<string[]>('extraRoots') ?? []);
    for (const u of picked) roots.add(u.fsPath);
    await config.update('extraRoots', [...roots], vscode.ConfigurationTarget.Global);
  }

  async showRoots(): Promise<void> {
    const catalog = await this.catalog();
    this.d.log.info('Spillway looks in:');
    for (const r of catalog.knownRoots()) {
      this.d.log.info(`  ${r.exists ? '✓' : '✗'} ${r.path} (${r.origin}; ${r.sources === '*' ? 'all sources' : r.sources.join(', ')})`);
    }
    this.d.log.show(true);
  }
}
