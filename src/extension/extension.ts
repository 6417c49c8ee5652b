// Entry point: registers the views and commands and nothing else. The catalog
// is created and scanned only when the Spills view first asks for its items.
import type * as vscode from 'vscode';
import { Container } from './container';

let container: Container | undefined;

export function activate(context: vscode.ExtensionContext): { activateMs: number; container: Container } {
  const t0 = Date.now();
  container = new Container(context, t0);
  context.subscriptions.push(container);
  const activateMs = Date.now() - t0;
  container.log.info(`Activated in ${activateMs} ms`);
  // Returned as the extension's API so the desktop test suite can read timings.
  return { activateMs, container };
}

export function deactivate(): void {
  container = undefined;
}
