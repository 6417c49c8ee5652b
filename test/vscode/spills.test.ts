/// <reference types="mocha" />
// The desktop suite (@vscode/test-cli): the same core checks as the e2e tier,
// from inside the extension host of a downloaded VS Code. .vscode-test.mjs
// points HOME at an empty temp folder; the fixture home is built there before
// Spillway is first used, so it sees only the fixtures.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Catalog } from '../../src/catalog/catalog';
import type { SessionInfo } from '../../src/catalog/types';
import type { Container } from '../../src/extension/container';
import type { SpillNode } from '../../src/extension/treeModel';
import { formatBytes } from '../../src/extension/format';
import { blobLabel, sessionLabel } from '../../src/extension/treeModel';
import { buildFixtureHome, type FixtureHome } from '../fixtures/build-home';

interface Api {
  activateMs: number;
  container: Container;
}

async function until<T>(fn: () => Promise<T | undefined> | T | undefined, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function allNodes(api: Api): Promise<SpillNode[]> {
  const out: SpillNode[] = [];
  const walk = async (n?: SpillNode) => {
    for (const c of await api.container.tree.getChildren(n)) {
      out.push(c);
      await walk(c);
    }
  };
  await walk();
  return out;
}

describe('Spillway in the VS Code extension host', function () {
  this.timeout(120_000);
  let fixture: FixtureHome;
  let api: Api;
  let expected: SessionInfo[];

  before(async () => {
    const home = process.env.SPILLWAY_TEST_HOME;
    assert.ok(home, 'SPILLWAY_TEST_HOME is set by .vscode-test.mjs');
    fixture = await buildFixtureHome(home);
    const config = vscode.workspace.getConfiguration('spillway');
    await config.update('extraRoots', fixture.userRoots, vscode.ConfigurationTarget.Global);
    await config.update('useTrash', false, vscode.ConfigurationTarget.Global);
    const reference = new Catalog({ env: fixture.env, roots: fixture.userRoots });
    await reference.scan();
    expected = reference.sessions().filter((s) => s.blobs.length > 0);
    await reference.dispose();
    const ext = vscode.extensions.getExtension('spillway.spillway');
    assert.ok(ext, 'the extension is loaded');
    api = (await ext.activate()) as Api;
  });

  it('registers without scanning, and reports its activation time', () => {
    assert.equal(typeof api.activateMs, 'number');
    assert.equal(api.container.service.current(), undefined, 'no catalog before the view asks');
  });

  it('shows every fixture session with its blobs, labels and sizes', async () => {
    const nodes = await allNodes(api);
    for (const s of expected) {
      const session = nodes.find((n) => n.kind === 'session' && n.session.key === s.key);
      assert.ok(session, `session ${s.key}`);
      const item = api.container.tree.getTreeItem(session);
      // Facts first (age, count, size), the title after.
      assert.ok(String(item.label).endsWith(` · ${sessionLabel(s)}`));
      assert.equal(item.description, `${s.blobs.length} blob${s.blobs.length === 1 ? '' : 's'} · ${formatBytes(s.bytes)}`);
      for (const b of s.blobs) {
        const node = nodes.find((n) => n.kind === 'blob' && n.blob.key === b.key);
        assert.ok(node, b.path);
        const bi = api.container.tree.getTreeItem(node);
        assert.ok(String(bi.label).startsWith(formatBytes(b.bytes)));
        if (b.tool) assert.equal(bi.description, blobLabel(b));
        assert.equal(bi.id, `blob:${b.key}`);
        assert.equal(node.kind === 'blob' && node.blob.bytes, fs.lstatSync(b.path).size);
      }
    }
  });

  it('shows a new blob without a refresh', async () => {
    const file = path.join(fixture.claude.toolResults, 'toolu_vscode_live_01.txt');
    fs.writeFileSync(file, Array.from({ length: 300 }, (_, i) => `row ${i + 1}${i + 1 === 222 ? ' NEEDLE-desktop-42' : ''}`).join('\n') + '\n', { mode: 0o600 });
    await until(async () => (await allNodes(api)).find((n) => n.kind === 'blob' && n.blob.path === file), 'the new blob node');
  });

  it('opens a blob at a line range with the lines selected', async () => {
    const file = path.join(fixture.claude.toolResults, 'toolu_vscode_live_01.txt');
    const node = (await allNodes(api)).find((n) => n.kind === 'blob' && n.blob.path === file);
    await vscode.commands.executeCommand('spillway.openAtLineRange', node, '120-180');
    const editor = await until(() => (vscode.window.activeTextEditor?.document.uri.fsPath === file ? vscode.window.activeTextEditor : undefined), 'the editor');
    assert.equal(editor.selection.start.line, 119);
    assert.equal(editor.selection.end.line, 179);
    assert.equal(editor.document.getText(editor.selection).split('\n')[0], 'row 120');
  });

  it('searches a needle into the Search view and opens the hit with the match selected', async () => {
    const file = path.join(fixture.claude.toolResults, 'toolu_vscode_live_01.txt');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // Lower case: smart case finds it in any case.
    await vscode.commands.executeCommand('spillway.grep', undefined, 'needle-desktop-42');
    const search = api.container.search;
    const [session] = search.getChildren();
    assert.ok(session, 'a session of results');
    const [blob] = search.getChildren(session);
    const [line] = search.getChildren(blob);
    assert.ok(line && line.kind === 'line' && line.line === 222, 'the line of the needle');
    await vscode.commands.executeCommand('spillway.search.open', line);
    const editor = await until(() => (vscode.window.activeTextEditor?.document.uri.fsPath === file ? vscode.window.activeTextEditor : undefined), 'the editor at the hit');
    assert.equal(editor.selection.active.line, 221);
    assert.equal(editor.document.getText(editor.selection), 'NEEDLE-desktop-42');
  });

  it('opens the context chart of a session with turns', async () => {
    const session = expected.find((s) => s.dir === fixture.claude.sessionDir) ?? expected.find((s) => s.transcript);
    assert.ok(session);
    await vscode.commands.executeCommand('spillway.showChart', { kind: 'session', session, blobs: session.blobs });
    await until(
      () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputWebview && t.label.startsWith('Context:')),
      'the chart tab',
    );
  });
});
