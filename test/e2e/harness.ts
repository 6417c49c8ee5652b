// Runs the packaged extension in code-server (VS Code's workbench served to a
// browser) and drives it with headless Chromium through playwright-core.
// Helpers here act as a person would: the activity bar, the command palette,
// tree rows, input boxes, dialogs; and read what the screen shows.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { chromium, type Browser, type FrameLocator, type Locator, type Page } from 'playwright-core';
import { procStat } from '../../src/common/process-state';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A workbench as a test sees it: no trust prompt, welcome page, tips, chat,
 * secondary side bar or updates; light and dark follow the page's colour
 * scheme (for screenshots in both).
 */
export const WORKBENCH_SETTINGS: Readonly<Record<string, unknown>> = {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'window.autoDetectColorScheme': true,
  'workbench.preferredLightColorTheme': 'Default Light Modern',
  'workbench.preferredDarkColorTheme': 'Default Dark Modern',
};

export interface CodeServerOptions {
  node: string;
  entry: string;
  extensionsDir: string;
  userDataDir: string;
  folder: string;
  env: NodeJS.ProcessEnv;
  settings: Record<string, unknown>;
}

export interface CodeServer {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
  output(): string;
}

/** Installs a .vsix with code-server's own installer (what a user's `--install-extension` does). */
export function installVsix(opts: Pick<CodeServerOptions, 'node' | 'entry' | 'extensionsDir' | 'userDataDir' | 'env'>, vsix: string): string {
  return execFileSync(opts.node, [opts.entry, '--extensions-dir', opts.extensionsDir, '--user-data-dir', opts.userDataDir, '--install-extension', vsix, '--force'], {
    env: opts.env,
    encoding: 'utf8',
  });
}

export async function startCodeServer(opts: CodeServerOptions): Promise<CodeServer> {
  // code-server windows are remote windows: machine-scoped settings (roots are
  // paths on that machine) are read from the Machine settings, the rest from User.
  for (const scope of ['User', 'Machine']) {
    fs.mkdirSync(path.join(opts.userDataDir, scope), { recursive: true });
    fs.writeFileSync(path.join(opts.userDataDir, scope, 'settings.json'), JSON.stringify(opts.settings, null, 2));
  }
  const port = await freePort();
  let out = '';
  const child: ChildProcess = spawn(
    opts.node,
    [
      opts.entry,
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--extensions-dir', opts.extensionsDir,
      '--user-data-dir', opts.userDataDir,
      '--disable-telemetry',
      '--disable-update-check',
      opts.folder,
    ],
    // Its own process group, so stop() can end the extension host, pty host and watchers it starts too.
    { env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const group = child.pid!;
  const leftover = (): void => signalGroup(group, 'SIGKILL');
  process.once('exit', leftover);
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`code-server exited (${child.exitCode}):\n${out}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`code-server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    pid: child.pid,
    output: () => out,
    stop: async () => {
      process.off('exit', leftover);
      await stopGroup(group);
    },
  };
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // the group has already gone
  }
}

/** Processes of the group still running; zombies do not count (nobody may reap them here). */
function groupRunning(group: number): boolean {
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const [state, , pgrp] = procStat(Number(pid)) ?? []; // none: gone meanwhile
    if (Number(pgrp) === group && state !== 'Z') return true;
  }
  return false;
}

/** Ends a process group (TERM, then KILL) and waits until none of it runs: only then can its folders be removed. */
export async function stopGroup(group: number): Promise<void> {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    signalGroup(group, signal);
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      if (!groupRunning(group)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
}

/**
 * A window on `folder` as a person opens one: 1440 x 1000, the workbench loaded with Spillway's icon in the activity
 * bar, light theme. `firstLoadMs`: how long the first page may take (a loaded machine took over 30 s to serve it).
 */
export async function openWorkbench(browser: Browser, server: CodeServer, folder: string, shotsDir: string, firstLoadMs?: number): Promise<Workbench> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  await page.goto(`${server.url}/?folder=${encodeURIComponent(folder)}`, firstLoadMs ? { timeout: firstLoadMs } : {});
  await page.locator('.activitybar [aria-label^="Spillway"]').first().waitFor({ state: 'visible', timeout: 90_000 });
  await page.emulateMedia({ colorScheme: 'light' });
  return new Workbench(page, shotsDir);
}

// ---- the workbench, as a person uses it ------------------------------------

export class Workbench {
  constructor(
    readonly page: Page,
    private readonly shotsDir: string,
  ) {}

  private shotIndex = 0;

  async screenshot(name: string): Promise<string> {
    const file = path.join(this.shotsDir, `${String(++this.shotIndex).padStart(2, '0')}-${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /**
   * The same screen in the light and the dark theme (the workbench follows the
   * page's colour scheme: `window.autoDetectColorScheme` is on), back in light after.
   */
  async screenshotThemes(name: string): Promise<string[]> {
    const files: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await this.setColorScheme(scheme);
      files.push(await this.screenshot(`${name}-${scheme}`));
    }
    await this.setColorScheme('light');
    return files;
  }

  async setColorScheme(scheme: 'light' | 'dark'): Promise<void> {
    await this.page.emulateMedia({ colorScheme: scheme });
    const workbench = this.page.locator('.monaco-workbench');
    await waitFor(async () => (await workbench.evaluate((w) => w.classList.contains('vs-dark'))) === (scheme === 'dark'), `the ${scheme} theme`);
    // Some colours fade in (the status bar's over a third of a second): a screenshot taken at once caught it half-way.
    await waitFor(() => this.page.evaluate(() => !document.getAnimations().some((a) => a instanceof CSSTransition && a.playState === 'running')), `the ${scheme} colours settled`);
  }

  /** Drags the side bar's edge until it is `width` px wide, as a person would. */
  async setSideBarWidth(width: number): Promise<void> {
    const bar = this.page.locator('.part.sidebar').first();
    const box = await bar.boundingBox();
    if (!box) throw new Error('no side bar');
    const y = box.y + box.height / 2;
    await this.page.mouse.move(box.x + box.width - 1, y);
    await this.page.mouse.down();
    await this.page.mouse.move(box.x + width, y, { steps: 8 });
    await this.page.mouse.up();
    await waitFor(async () => Math.abs(((await bar.boundingBox())?.width ?? 0) - width) <= 2, `a ${width} px side bar`);
  }

  /** Whether a tree row's label (not its description) is shown whole: nothing of it cut by the side bar's edge. */
  async labelFits(row: Locator): Promise<boolean> {
    return row.locator('.label-name').evaluate((label) => {
      const box = label.getBoundingClientRect();
      const bar = label.closest('.part.sidebar')?.getBoundingClientRect();
      return label.scrollWidth <= label.clientWidth + 1 && bar !== undefined && box.right <= bar.right;
    });
  }

  /**
   * The part of a row's label a person can read: the characters left of the side bar's edge, of the label's own
   * box and of the row's inline buttons when they show (hovered), an ellipsis taking the last one's place.
   */
  async visibleLabel(row: Locator): Promise<string> {
    return row.locator('.label-name').first().evaluate((label) => {
      const container = label.closest('.monaco-icon-label-container') ?? label;
      const bar = label.closest('.part.sidebar')?.getBoundingClientRect();
      const actions = label.closest('.monaco-list-row')?.querySelector('.actions');
      const shown = actions && getComputedStyle(actions).display !== 'none' && actions.getBoundingClientRect().width > 0;
      const cut = container.scrollWidth > container.clientWidth + 1;
      const right = Math.min(bar?.right ?? Infinity, container.getBoundingClientRect().right, shown ? actions.getBoundingClientRect().left : Infinity) - (cut ? 8 : 0);
      const range = document.createRange();
      const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
      let out = '';
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (let i = 0; i < text.length; i++) {
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          if (range.getBoundingClientRect().right > right + 0.5) return out;
          out += text[i];
        }
      }
      return out;
    });
  }

  /** The title of the side bar view holding the focus ("Spills", "Search"), or undefined when it is elsewhere. */
  async focusedView(): Promise<string | undefined> {
    return this.page.evaluate(() => document.activeElement?.closest('.pane')?.querySelector('.pane-header h3.title')?.textContent ?? undefined);
  }

  /** Whether the focus is in a text editor. */
  async focusInEditor(): Promise<boolean> {
    return this.page.evaluate(() => document.activeElement?.closest('.editor-instance') !== null && document.activeElement?.closest('.editor-instance') !== undefined);
  }

  /** Opens the command palette, types the command's title and runs it. */
  async runCommand(title: string): Promise<void> {
    const input = this.page.locator('.quick-input-widget input[type="text"]');
    // Click the row whose label is exactly the title: the first match may be another command.
    const exact = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
    const row = this.page.locator('.quick-input-list .monaco-list-row').filter({ has: this.page.locator('.label-name', { hasText: exact }) }).first();
    // The workbench may close a palette it has just opened (seen in CI runs: after a reload the input went inert, then
    // hidden, as it was typed into; after a view title toggle the row matched, then hid before its click): then it
    // is opened again, as a person would. A click that ran the command closes the palette, so none is run twice.
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press('Escape');
      await this.page.keyboard.press('F1');
      try {
        await input.waitFor({ state: 'visible', timeout: 10_000 });
        await input.fill(`>${title}`, { timeout: 10_000 });
        await row.click({ timeout: 10_000 });
        return;
      } catch (err) {
        if (attempt < 3) continue;
        throw err;
      }
    }
  }

  /** Types into the quick input (input box or quick pick) that is open and presses Enter. */
  async answerInput(text: string): Promise<void> {
    const input = this.page.locator('.quick-input-widget input[type="text"]');
    await input.waitFor({ state: 'visible' });
    await input.fill(text);
    await input.press('Enter');
  }

  /** Shows the Spillway side bar (clicking its activity bar icon when it is not already shown: a second click would hide it). */
  async openSpillway(): Promise<void> {
    // The icon toggles the side bar: a view drawn again just as it was looked at (after a reload) was closed by the
    // click meant to open it. So it is clicked again until the view shows, as a person would.
    for (let attempt = 0; attempt < 3 && !(await this.spillsView().isVisible()); attempt++) {
      await this.page.locator('.activitybar [aria-label^="Spillway"]').first().click();
      // Move the pointer off the icon, as a person would: its badge hover would
      // otherwise cover the top rows of the tree and swallow the next clicks.
      const size = this.page.viewportSize();
      if (size) await this.page.mouse.move(size.width * 0.6, size.height * 0.5);
      await this.spillsView().waitFor({ state: 'visible', timeout: 5_000 }).catch(() => undefined);
    }
    await this.spillsView().waitFor({ state: 'visible' });
  }

  spillsView(): Locator {
    return this.page.locator('[id="workbench.view.extension.spillway"]');
  }

  /** One view of the Spillway side bar, by its title ("Spills", "Search"). */
  pane(title: string): Locator {
    return this.spillsView().locator('.pane', { has: this.page.locator(`.pane-header h3.title[title="${title}"], .pane-header h3.title:text-is("${title}")`) });
  }

  /** The visible rows of the Spills tree: label, description, depth, expanded state. */
  async treeRows(title = 'Spills'): Promise<Array<{ label: string; description: string; aria: string; level: number; expanded: string | null; selected: boolean }>> {
    return this.pane(title)
      .locator('.monaco-list-row')
      .evaluateAll((rows) =>
        rows.map((r) => ({
          label: r.querySelector('.label-name')?.textContent ?? '',
          description: r.querySelector('.label-description')?.textContent ?? '',
          aria: r.getAttribute('aria-label') ?? '',
          level: Number(r.getAttribute('aria-level') ?? 0),
          expanded: r.getAttribute('aria-expanded'),
          selected: r.getAttribute('aria-selected') === 'true',
        })),
      );
  }

  row(label: string | RegExp): Locator {
    return this.pane('Spills').locator('.monaco-list-row', { has: this.page.locator('.label-name', { hasText: label }) }).first();
  }

  /**
   * Choose `label` from `row`'s context menu. A click that lands while the menu
   * is still settling is now and then lost: the menu stays open and nothing
   * runs (a run of the whole tier then failed at every later step, the open
   * menu covering the tree). So the item is clicked again while the menu is
   * still there; once an action runs, the menu closes.
   */
  async contextMenu(row: Locator, label: string): Promise<void> {
    await row.hover();
    await row.click({ button: 'right' });
    const item = this.page.locator('.context-view .action-label', { hasText: label });
    for (let attempt = 1; ; attempt++) {
      await item.click();
      try {
        await item.waitFor({ state: 'hidden', timeout: 3_000 });
        return;
      } catch (err) {
        if (attempt < 3) continue;
        await this.page.keyboard.press('Escape'); // the tests after this one get the tree back
        throw err;
      }
    }
  }

  /** A row by a unique part of its accessible label (session id, blob file name). */
  rowByAria(part: string): Locator {
    return this.pane('Spills').locator(`.monaco-list-row[aria-label*="${part.replace(/"/g, '\\"')}"]`).first();
  }

  /** Status bar text of the editor selection ("Ln 180, Col 12 (3,420 selected)"). */
  async selectionStatus(): Promise<string> {
    const item = this.page.locator('[id="status.editor.selection"]');
    await item.waitFor({ state: 'visible' });
    return (await item.textContent())?.trim() ?? '';
  }

  /** The modal dialog's message and a button by its label. */
  dialog(): Locator {
    return this.page.locator('.monaco-dialog-box');
  }

  /** The chart webview's page (the workbench nests it in two iframes). */
  chartFrame(): FrameLocator {
    return this.page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  }
}

/** Polls `fn` until it returns a truthy value. */
export async function waitFor<T>(fn: () => Promise<T> | T, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Finds the extension's log lines (LogOutputChannel files under the user data dir). */
export function extensionLog(userDataDir: string): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/Spillway\.log$/.test(e.name)) found.push(fs.readFileSync(p, 'utf8'));
    }
  };
  const logs = path.join(userDataDir, 'logs');
  if (fs.existsSync(logs)) walk(logs);
  return found.join('\n');
}
