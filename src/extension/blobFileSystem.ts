// Blobs are evidence: every editor the extension opens on one goes through
// this read-only file system (`spillway-blob:` + the blob's path). Only files the catalog lists are served, read
// through the catalog's own checked open (no symlink, no folder swapped for
// one on the way).

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { CatalogService } from './catalogService';
import { ReadOnlyFileSystem } from './readOnlyFileSystem';
import { parseSliceQuery, SLICE_SCHEME } from './sliceUri';

export const BLOB_SCHEME = 'spillway-blob';

/** The read-only URI of a blob's file. */
export function blobUri(file: string): vscode.Uri {
  return vscode.Uri.file(file).with({ scheme: BLOB_SCHEME });
}

export class BlobFileSystem extends ReadOnlyFileSystem {
  /** What each watched file was at its last look ("size:mtime", or "" when gone), to tell editors what changed. */
  private readonly watched = new Map<string, string>();

  constructor(private readonly service: CatalogService) {
    super(BLOB_SCHEME);
    this.register(service.onDidChange(() => this.recheck()));
  }

  protected override where(uri: vscode.Uri): string {
    return uri.fsPath;
  }

  /** Opens a listed blob through the catalog's checked read; anything else is "not found". */
  private async open(uri: vscode.Uri) {
    const catalog = await this.service.ready();
    if (!catalog?.blob(uri.fsPath)) throw vscode.FileSystemError.FileNotFound(uri);
    try {
      return await catalog.openForRead(uri.fsPath);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw vscode.FileSystemError.FileNotFound(uri);
      throw vscode.FileSystemError.NoPermissions(`${uri.fsPath}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const handle = await this.open(uri);
    try {
      const s = await handle.stat();
      return { type: vscode.FileType.File, ctime: s.ctimeMs, mtime: s.mtimeMs, size: s.size, permissions: vscode.FilePermission.Readonly };
    } finally {
      await handle.close();
    }
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const handle = await this.open(uri);
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  override watch(uri: vscode.Uri): vscode.Disposable {
    const key = uri.fsPath;
    this.watched.set(key, this.stamp(key));
    return new vscode.Disposable(() => this.watched.delete(key));
  }

  private stamp(file: string): string {
    const blob = this.service.current()?.blob(file);
    return blob ? `${blob.bytes}:${blob.mtimeMs}` : '';
  }

  /** A watched blob that grew or went: its editor is told (and shows the new text, or that the file is gone). */
  private recheck(): void {
    // Between a Refresh's old catalog and its new one nothing is known: no file is "gone" then.
    if (!this.service.current()) return;
    const events: vscode.FileChangeEvent[] = [];
    for (const [file, before] of this.watched) {
      const now = this.stamp(file);
      if (now === before) continue;
      this.watched.set(file, now);
      events.push({ type: now ? vscode.FileChangeType.Changed : vscode.FileChangeType.Deleted, uri: blobUri(file) });
    }
    if (events.length) this.changed.fire(events);
    void this.closeTabsOfDeleted();
  }

  /** A deleted blob's editors close (its own, and its slices), as VS Code closes a deleted file's. */
  private async closeTabsOfDeleted(): Promise<void> {
    const catalog = this.service.current();
    if (!catalog) return;
    const gone = (file: string | undefined) => file !== undefined && !catalog.blob(file) && !fs.existsSync(file);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => {
      const uri = t.input instanceof vscode.TabInputText ? t.input.uri : undefined;
      if (uri?.scheme === BLOB_SCHEME) return gone(uri.fsPath);
      if (uri?.scheme === SLICE_SCHEME) return gone(parseSliceQuery(uri.query)?.file);
      return false;
    });
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
  }
}
