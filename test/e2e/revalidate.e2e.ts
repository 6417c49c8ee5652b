// Stale-while-revalidate in a real VS Code (code-server + Chromium, the packaged .vsix): the Spills tree shows the
// saved index first, as stored, then checks it against the disk. Three Claude Code sessions are indexed; while
// VS Code is closed a blob is added to one and another's blob is deleted. Opened, the tree shows the old counts
// (the check held by the test-only SPILLWAY_TEST_HOLD_CHECK_UNTIL_FILE); a session is expanded, another expanded
// and one of its blobs selected; then the check runs and the correction appears: the new counts, the new blob under
// its expanded session, the expansion and the selection kept, and no row of the unchanged session taken out of the
// page meanwhile (a MutationObserver on the list), nor any row count drop (no flicker).
// Screenshots: test-results/e2e-revalidate/.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/catalog';
import { defaultCacheDir } from '../../src/catalog/index/index-file';
import { writeClaudeSession, type ClaudeSession } from './claude-sessions';
import { extensionLog, installVsix, launchChromium, openWorkbench, startCodeServer, waitFor, type Workbench, WORKBENCH_SETTINGS, type CodeServer } from './harness';

const repo = path.resolve(__dirname, '../..');
const shots = path.join(repo, 'test-results', 'e2e-revalidate');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-revalidate-'));
const release = path.join(tmp, 'release-the-check');
const HOUR = 3600_000;
const BYTES = 2000;
let server: CodeServer | undefined;
let browser: Browser | undefined;
let page: Page;
let wb: Workbench;
let userDataDir: string;
/** Unchanged; grown (a blob added while VS Code was closed); shrunk (a blob deleted meanwhile). */
let same: ClaudeSession;
let grown: ClaudeSession;
let shrunk: ClaudeSession;
let added: string;
let deleted: string;

const fileOf = (blob: string): string => path.basename(blob);

beforeAll(async () => {
  fs.rmSync(shots, { recursive: true, force: true });
  fs.mkdirSync(shots, { recursive: true });
  const setup = JSON.parse(execFileSync(process.execPath, [path.join(repo, 'scripts', 'e2e-setup.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as { node24: string; codeServer: string };
  const home = path.join(tmp, 'home');
  const now = Date.now();
  same = writeClaudeSession(home, { id: '11111111-0000-4000-8000-000000000001', title: 'tidy the changelog', at: now - 1 * HOUR, blobs: 3, bytes: BYTES });
  grown = writeClaudeSession(home, { id: '22222222-0000-4000-8000-000000000002', title: 'fix the flaky upload test', at: now - 2 * HOUR, blobs: 3, bytes: BYTES });
  shrunk = writeClaudeSession(home, { id: '33333333-0000-4000-8000-000000000003', title: 'bump the linter', at: now - 3 * HOUR, blobs: 3, bytes: BYTES });
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(CLAUDE_|PI_|XDG_|GEMINI|OPENCODE|SPILLWAY|TMPDIR$|TMP$|TEMP$)/.test(k)));
  const env: NodeJS.ProcessEnv = { ...clean, HOME: home, TMPDIR: path.join(home, 'tmp'), XDG_CACHE_HOME: path.join(home, '.cache'), XDG_STATE_HOME: path.join(home, '.local', 'state'), XDG_DATA_HOME: path.join(home, '.local', 'share') };
  fs.mkdirSync(env.TMPDIR!, { recursive: true });
  // The index the extension shares with the CLI, written as `spillway list` writes it.
  const indexing = new Catalog({ env, cacheDir: defaultCacheDir(env) });
  await indexing.scan();
  expect(indexing.sessions().map((s) => s.blobs.length)).toEqual([3, 3, 3]);
  await indexing.dispose();
  // While VS Code is closed: a blob added to one session (older than its newest, so the row keeps its place), and
  // another session's oldest blob deleted.
  added = path.join(grown.folder, 'toolu_added_while_closed.txt');
  fs.writeFileSync(added, 'written while VS Code was closed\n'.repeat(60), { mode: 0o600 });
  const older = new Date(now - 2 * HOUR - 30 * 60_000);
  fs.utimesSync(added, older, older);
  deleted = shrunk.blobs.at(-1)!;
  fs.rmSync(deleted);

  execFileSync('npm', ['run', '--silent', 'package'], { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] });
  userDataDir = path.join(tmp, 'user-data');
  // The test holds the check until it has looked at the index's rows (inert unless set).
  const serverEnv = { ...env, SPILLWAY_TEST_HOLD_CHECK_UNTIL_FILE: release };
  const base = { node: setup.node24, entry: setup.codeServer, extensionsDir: path.join(tmp, 'extensions'), userDataDir, env: serverEnv };
  installVsix(base, path.join(repo, 'spillway.vsix'));
  const folder = path.join(tmp, 'workspace');
  fs.mkdirSync(folder);
  server = await startCodeServer({ ...base, folder, settings: WORKBENCH_SETTINGS });
  browser = await launchChromium();
  wb = await openWorkbench(browser, server, folder, shots, 120_000);
  page = wb.page;
});

afterAll(async () => {
  if (userDataDir) fs.writeFileSync(path.join(shots, 'spillway.log'), extensionLog(userDataDir));
  await browser?.close();
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The tooltip of a blob's row (it names the blob's session). */
const sessionTooltip = (): Locator => page.locator('.workbench-hover, .monaco-hover').filter({ hasText: 'Session: ' }).first();

/** A session's row description ("3 blobs · 5.9 KB"). */
const description = async (s: ClaudeSession): Promise<string> => (await wb.rowByAria(`session ${s.id}`).locator('.label-description').textContent()) ?? '';

// No retry: the check the test holds runs once, so a second attempt would find the rows corrected already.
it('shows the index first, then the check corrects only what changed, keeping the expansion and the selection', { timeout: 300_000, retry: 0 }, async () => {
  await wb.openSpillway();
  for (const s of [same, grown, shrunk]) await wb.rowByAria(`session ${s.id}`).waitFor({ state: 'visible', timeout: 60_000 });
  // The index as stored: every session at 3 blobs, the view saying it is checking.
  for (const s of [same, grown, shrunk]) expect(await description(s)).toMatch(/^3 blobs · /);
  expect(await wb.pane('Spills').locator('.pane-header').innerText()).toContain('checking');
  await waitFor(() => extensionLog(userDataDir).includes('Checking held until'), 'the check held for the test');
  await wb.screenshot('index-rows');

  // The person at work meanwhile: the unchanged session and the grown one expanded, a blob of the unchanged one selected.
  for (const s of [same, grown]) {
    const row = wb.rowByAria(`session ${s.id}`);
    await row.click();
    await waitFor(async () => (await row.getAttribute('aria-expanded')) === 'true', 'the session to expand');
  }
  for (const blob of [...same.blobs, ...grown.blobs]) await wb.rowByAria(`file ${fileOf(blob)}`).waitFor({ state: 'visible' });
  expect(await wb.rowByAria(`file ${fileOf(added)}`).count()).toBe(0);
  const picked = wb.rowByAria(`file ${fileOf(same.blobs[1]!)}`);
  await picked.click();
  await waitFor(async () => (await picked.getAttribute('aria-selected')) === 'true', 'the blob selected');
  // The pointer off the tree now, while the row under it is still on the page: a tooltip shown for a row the check
  // then draws again stays open (that row never sees the pointer leave), and would cover the rows in the screenshot.
  await page.mouse.move(1200, 900, { steps: 4 });
  await sessionTooltip().waitFor({ state: 'hidden', timeout: 15_000 });
  const rowsBefore = (await wb.treeRows()).length;

  // Everything the list does to its rows from here on, recorded in the page.
  await wb.pane('Spills').locator('.monaco-list-rows').first().evaluate((rows, before) => {
    const seen = { removed: [] as string[], fewest: before };
    (window as unknown as { spillwayRows: typeof seen }).spillwayRows = seen;
    new MutationObserver((records) => {
      for (const r of records) for (const n of Array.from(r.removedNodes)) if (n instanceof HTMLElement) seen.removed.push(n.getAttribute('aria-label') ?? n.className);
      seen.fewest = Math.min(seen.fewest, rows.querySelectorAll('.monaco-list-row').length);
    }).observe(rows, { childList: true });
  }, rowsBefore);

  fs.writeFileSync(release, '');
  // The correction: the grown session's new blob listed under it (still expanded), the shrunk one's count down.
  await wb.rowByAria(`file ${fileOf(added)}`).waitFor({ state: 'visible', timeout: 60_000 });
  await waitFor(async () => /^2 blobs · /.test(await description(shrunk)), 'the shrunk session counted again');
  expect(await description(grown)).toMatch(/^4 blobs · /);
  expect(await description(same)).toMatch(/^3 blobs · /);
  await waitFor(async () => !(await wb.pane('Spills').locator('.pane-header').innerText()).includes('checking'), "'checking…' gone from the view's title", 30_000);
  await sessionTooltip().waitFor({ state: 'hidden', timeout: 15_000 });
  await wb.screenshot('checked-rows');

  for (const s of [same, grown]) expect(await wb.rowByAria(`session ${s.id}`).getAttribute('aria-expanded')).toBe('true');
  expect(await wb.rowByAria(`session ${shrunk.id}`).getAttribute('aria-expanded')).toBe('false');
  expect(await picked.getAttribute('aria-selected')).toBe('true');
  const rows = await wb.treeRows();
  expect(rows.filter((r) => r.selected).map((r) => r.aria)).toEqual([expect.stringContaining(`file ${fileOf(same.blobs[1]!)}`)]);
  expect(rows.length).toBe(rowsBefore + 1);

  const seen = await page.evaluate(() => (window as unknown as { spillwayRows: { removed: string[]; fewest: number } }).spillwayRows);
  // No row of the unchanged session (its own or its blobs') left the page, and the list never had fewer rows.
  const unchanged = [`session ${same.id}`, ...same.blobs.map((b) => `file ${fileOf(b)}`)];
  expect(seen.removed.filter((label) => unchanged.some((u) => label.includes(u)))).toEqual([]);
  expect(seen.fewest).toBeGreaterThanOrEqual(rowsBefore);
  const log = extensionLog(userDataDir);
  expect(log).toMatch(/Showing 3 sessions from the index after \d+ ms while checking them/);
  expect(log).toMatch(/Scanned 3 sessions in \d+ ms/);
});
