// The VS Code side of remote roots: their rows as TreeItems, the read-only `spillway-s3:` file system whose
// documents are line ranges of remote blobs (read by ranged GETs, never the whole object), and the commands that
// open one and list a root's next page. What rows say and how slices are read is in remoteModel.ts.
import * as vscode from 'vscode';
import { parseLineRange, validateLineRange, type LineRange } from './lineRange';
import type { ChartSource } from './chartPanel';
import { toChartData } from './chartModel';
import { ReadOnlyFileSystem } from './readOnlyFileSystem';
import {
  confirmRemoteDelete,
  parseRemoteSliceQuery,
  REMOTE_FIRST_LINES,
  REMOTE_HEADER_LINES,
  REMOTE_SCHEME,
  remoteDeletedMessage,
  remoteRow,
  remoteSliceText,
  remoteSliceUriParts,
  type RemoteBlobNode,
  type RemoteNode,
  type RemoteRoots,
  type RemoteSessionNode,
} from './remoteModel';

export function remoteTreeItem(node: RemoteNode): vscode.TreeItem {
  const row = remoteRow(node);
  const item = new vscode.TreeItem(row.label, row.collapsible ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
  item.id = row.id;
  item.contextValue = row.contextValue;
  if (row.description) item.description = row.description;
  // A plain string: a key or an error message is never read as markdown.
  if (row.tooltip) item.tooltip = row.tooltip;
  item.iconPath = new vscode.ThemeIcon(row.icon, node.kind === 'remote-note' && node.note === 'error' ? new vscode.ThemeColor('errorForeground') : undefined);
  if (node.kind === 'remote-blob') item.command = { command: 'spillway.openRemoteBlob', title: 'Open Remote Blob', arguments: [node] };
  if (node.kind === 'remote-note' && node.note === 'more') item.command = { command: 'spillway.remoteShowMore', title: 'Show More', arguments: [node] };
  return item;
}

export function remoteSliceUri(node: RemoteBlobNode, range: LineRange): vscode.Uri {
  return vscode.Uri.from(remoteSliceUriParts({ root: node.root.url, key: node.blob.key, size: node.blob.bytes, range }));
}

/** Slices of remote blobs, read once each (VS Code stats a document before it reads it). */
export class RemoteSliceFileSystem extends ReadOnlyFileSystem {
  /** The last text read per URI: VS Code stats a document before reading it, and a slice is read once for both. */
  private readonly texts = new Map<string, Promise<Uint8Array>>();

  constructor(private readonly roots: RemoteRoots) {
    super(REMOTE_SCHEME);
  }

  private read(uri: vscode.Uri): Promise<Uint8Array> {
    const id = uri.toString();
    let text = this.texts.get(id);
    if (!text) {
      const req = parseRemoteSliceQuery(uri.query);
      if (!req) throw vscode.FileSystemError.FileNotFound(uri);
      text = remoteSliceText(this.roots, req).then(
        (r) => Buffer.from(r.text, 'utf8'),
        (err: unknown) => {
          this.texts.delete(id);
          throw vscode.FileSystemError.Unavailable(err instanceof Error ? err.message : String(err));
        },
      );
      this.texts.set(id, text);
      // Only the open documents' slices are kept.
      if (this.texts.size > 32) this.texts.delete(this.texts.keys().next().value!);
    }
    return text;
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const bytes = await this.read(uri);
    return { type: vscode.FileType.File, ctime: 0, mtime: 0, size: bytes.length, permissions: vscode.FilePermission.Readonly };
  }

  readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return this.read(uri);
  }
}

/**
 * Opens lines of a remote blob, the range selected below the header (the first lines when none is given), or only
 * line `focus` of it (a search's match).
 */
export async function openRemoteBlob(node: RemoteBlobNode, input?: string, ask = false, focus?: number): Promise<void> {
  let range: LineRange = { start: 1, end: REMOTE_FIRST_LINES };
  if (input !== undefined || ask) {
    const text =
      input ??
      (await vscode.window.showInputBox({
        title: `Open ${node.blob.key.slice(node.blob.key.lastIndexOf('/') + 1)} at lines…`,
        prompt: 'Type START-END, e.g. 120-180. Only these lines are read from the bucket.',
        placeHolder: '120-180',
        validateInput: (v) => validateLineRange(v),
      }));
    if (text === undefined) return;
    const parsed = parseLineRange(text);
    if (!parsed.ok) throw new Error(parsed.message);
    range = parsed.range;
  }
  const doc = await vscode.workspace.openTextDocument(remoteSliceUri(node, range));
  const h = REMOTE_HEADER_LINES;
  const last = Math.max(h, Math.min(doc.lineCount - 1, h + (range.end - range.start)));
  const at = focus === undefined ? undefined : Math.min(last, h + focus - range.start);
  const sel = at === undefined ? new vscode.Range(h, 0, last, doc.lineAt(last).range.end.character) : new vscode.Range(at, 0, at, doc.lineAt(at).range.end.character);
  const editor = await vscode.window.showTextDocument(doc, { preview: true, selection: sel });
  editor.revealRange(sel, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** Deletes a remote session's copies once the user confirms; `relist` shows the root as it is after. */
export async function deleteRemoteSession(node: RemoteSessionNode, relist: () => Promise<void>): Promise<void> {
  const m = confirmRemoteDelete(node);
  if ((await vscode.window.showWarningMessage(m.message, { modal: true, detail: m.detail }, m.action)) !== m.action) return;
  try {
    const result = await node.root.deleteSession(node.session);
    const text = remoteDeletedMessage(result);
    void (result.failed.length ? vscode.window.showWarningMessage(text) : vscode.window.showInformationMessage(text));
  } finally {
    await relist();
  }
}

/** A remote session's chart: read from the bucket each time it is opened; a clicked blob opens at its first lines. */
export function remoteChart(node: RemoteSessionNode): ChartSource {
  const { root, session } = node;
  return {
    key: `remote:${root.url}|${session.agent}/${session.id}`,
    title: `${session.id} (${root.url})`,
    async load(s) {
      const read = await root.turns(session);
      if ('error' in read) return { type: 'error', message: read.error };
      return { type: 'chartData', data: toChartData(read.session, read.series, { contextWindow: s.contextWindow, budgetDelta: s.budgetDelta }) };
    },
    async revealBlob(url) {
      const blob = session.blobs.find((b) => url.endsWith(`/${b.key}`));
      if (blob) await openRemoteBlob({ kind: 'remote-blob', root, blob });
    },
  };
}
