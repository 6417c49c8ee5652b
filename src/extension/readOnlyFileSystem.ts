// What every file system of spilled output shares: registered with `isReadonly`, so no keystroke, paste,
// format-on-save, auto-save or other extension can write through it, and every write refused in the same words.
// A subclass says how a file is stat'ed and read.
import * as vscode from 'vscode';
import { Disposable } from './lifecycle';

export abstract class ReadOnlyFileSystem extends Disposable implements vscode.FileSystemProvider {
  protected readonly changed = this.register(new vscode.EventEmitter<vscode.FileChangeEvent[]>());
  readonly onDidChangeFile = this.changed.event;

  constructor(scheme: string) {
    super();
    this.register(vscode.workspace.registerFileSystemProvider(scheme, this, { isReadonly: true, isCaseSensitive: true }));
  }

  abstract stat(uri: vscode.Uri): Promise<vscode.FileStat>;
  abstract readFile(uri: vscode.Uri): Promise<Uint8Array>;

  /** Nothing changes unless a subclass says so. */
  watch(_uri: vscode.Uri): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(uri: vscode.Uri): never {
    throw vscode.FileSystemError.FileNotADirectory(uri);
  }

  createDirectory(uri: vscode.Uri): never {
    return this.refuse(uri);
  }

  writeFile(uri: vscode.Uri): never {
    return this.refuse(uri);
  }

  delete(uri: vscode.Uri): never {
    return this.refuse(uri);
  }

  rename(uri: vscode.Uri): never {
    return this.refuse(uri);
  }

  /** How an error names the file. */
  protected where(uri: vscode.Uri): string {
    return uri.path;
  }

  private refuse(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(`${this.where(uri)}: spilled output is read-only`);
  }
}
