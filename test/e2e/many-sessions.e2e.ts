// An agent with more sessions than the tree lists at first, in a real VS Code
// (code-server + Chromium, the packaged .vsix): a page of sessions, then a
// row that lists the next page, until the oldest session is there.
// Screenshots: test-results/e2e-many/.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SESSION_PAGE } from '../../src/extension/treeModel';
import { installVsix, launchChromium, startCodeServer, waitFor, Workbench, WORKBENCH_SETTINGS, type CodeServer } from './harness';

const repo = path.resolve(__dirname, '../..');
const shots = path.join(repo, 'test-results', 'e2e-many');
/** Two pages and a few: the last "Show more" row lists fewer than a page. */
const SESSIONS = SESSION_PAGE * 2 + 7;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-many-'));
let server: CodeServer | undefined;
let browser: Browser | undefined;
let wb: Workbench;

/** Session i's id; session 0 is the newest. */
const idOf = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** Claude Code sessions of one spilled Bash output each, session i last changed i minutes ago. */
function writeSessions(home: string): void {
  const project = path.join(home, '.claude', 'projects', '-home-dev-many');
  for (let i = 0; i < SESSIONS; i++) {
    const id = idOf(i);
    const toolUseId = `toolu_${String(i).padStart(20, '0')}`;
    const folder = path.join(project, id, 'tool-results');
    fs.mkdirSync(folder, { recursive: true });
    const blob = path.join(folder, `${toolUseId}.txt`);
    fs.writeFileSync(blob, `build ${i}\n`.repeat(200));
    const at = new Date(Date.now() - i * 60_000);
    const base = { sessionId: id, cwd: '/home/dev/many', isSidechain: false, timestamp: at.toISOString() };
    const lines = [
      { ...base, type: 'assistant', message: { id: `msg_${i}`, role: 'assistant', model: 'm', content: [{ type: 'tool_use', id: toolUseId, name: 'Bash', input: { command: `make step-${i}` } }], usage: { input_tokens: 10, output_tokens: 5 } } },
      { ...base, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: `<persisted-output>\nFull output saved to: ${blob}\n</persisted-output>` }] } },
    ];
    const transcript = path.join(project, `${id}.jsonl`);
    fs.writeFileSync(transcript, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    for (const file of [blob, transcript, path.dirname(folder), folder]) fs.utimesSync(file, at, at);
  }
}

beforeAll(async () => {
  fs.rmSync(shots, { recursive: true, force: true });
  fs.mkdirSync(shots, { recursive: true });
  const setup = JSON.parse(execFileSync(process.execPath, [path.join(repo, 'scripts', 'e2e-setup.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as { node24: string; codeServer: string };
  const home = path.join(tmp, 'home');
  writeSessions(home);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(CLAUDE_|PI_|XDG_|GEMINI|OPENCODE|SPILLWAY|TMPDIR$|TMP$|TEMP$)/.test(k)));
  const env = { ...clean, HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), XDG_STATE_HOME: path.join(home, '.local', 'state'), XDG_DATA_HOME: path.join(home, '.local', 'share') };
  execFileSync('npm', ['run', '--silent', 'package'], { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = { node: setup.node24, entry: setup.codeServer, extensionsDir: path.join(tmp, 'extensions'), userDataDir: path.join(tmp, 'user-data'), env };
  installVsix(base, path.join(repo, 'spillway.vsix'));
  const folder = path.join(tmp, 'workspace');
  fs.mkdirSync(folder);
  server = await startCodeServer({ ...base, folder, settings: WORKBENCH_SETTINGS });
  browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  wb = new Workbench(page, shots);
  await page.goto(`${server.url}/?folder=${encodeURIComponent(folder)}`);
  await page.locator('.activitybar [aria-label^="Spillway"]').first().waitFor({ state: 'visible', timeout: 90_000 });
  await page.emulateMedia({ colorScheme: 'light' });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 300 }); // an exiting extension host may still write there
});

/**
 * The tree's last row, gone to as a person would: End in the list (focused without a click, which would fold a
 * row); undefined until the focus is there (a refresh may move it meanwhile: callers ask again).
 */
const lastRow = async () => {
  await wb.pane('Spills').locator('.monaco-list').first().focus();
  await wb.page.keyboard.press('End');
  // The list's own rows (not the sticky agent row above them), the focused one last of its set.
  const focused = wb.pane('Spills').locator('.monaco-list-rows > .monaco-list-row.focused');
  if ((await focused.count()) !== 1) return undefined;
  const row = await focused.evaluate((r) => ({
    label: r.querySelector('.label-name')?.textContent ?? '',
    description: r.querySelector('.label-description')?.textContent ?? '',
    aria: r.getAttribute('aria-label') ?? '',
    last: r.getAttribute('aria-posinset') === r.getAttribute('aria-setsize'),
  }));
  return row.last ? row : undefined;
};

it(`lists ${SESSION_PAGE} sessions, then a row that lists more, page by page, to the oldest`, async () => {
  await wb.openSpillway();
  const agent = wb.row('Claude Code');
  await agent.waitFor({ state: 'visible', timeout: 60_000 });
  // Every session counted once the first scan is done (rows come in while it goes on).
  await waitFor(async () => new RegExp(`^${SESSIONS} blobs · `).test((await agent.locator('.label-description').textContent()) ?? ''), `${SESSIONS} blobs on the agent's row`, 60_000);
  await wb.setSideBarWidth(300);
  let last = await waitFor(lastRow, 'the last row focused');
  expect(last).toMatchObject({ label: `Show ${SESSION_PAGE} more`, description: `${SESSION_PAGE} of ${SESSIONS}` });
  // The page is the newest sessions (session 0 the newest): the last of them is shown above the row, the next is not.
  await wb.rowByAria(`session ${idOf(SESSION_PAGE - 1)}`).waitFor({ state: 'visible' });
  expect(await wb.rowByAria(`session ${idOf(SESSION_PAGE)}`).count()).toBe(0);
  expect(await wb.labelFits(wb.row(`Show ${SESSION_PAGE} more`)), 'the row read whole at 300 px').toBe(true);
  await wb.screenshotThemes('more-row');

  await wb.page.keyboard.press('Enter');
  last = await waitFor(async () => {
    const row = await lastRow();
    return row && row.label !== `Show ${SESSION_PAGE} more` ? row : undefined;
  }, 'the next page listed');
  expect(last).toMatchObject({ label: `Show ${SESSIONS - SESSION_PAGE * 2} more`, description: `${SESSION_PAGE * 2} of ${SESSIONS}` });

  await wb.row(`Show ${SESSIONS - SESSION_PAGE * 2} more`).click();
  last = await waitFor(async () => {
    const row = await lastRow();
    return row && !row.label.startsWith('Show ') ? row : undefined;
  }, 'every session listed');
  expect(last.aria).toContain(`session ${idOf(SESSIONS - 1)}`);
  expect((await wb.treeRows()).some((r) => r.label.startsWith('Show '))).toBe(false);
  await wb.screenshot('every-session');
});

it('reveals a blob of a session past the listed ones: its page is listed first', async () => {
  // A fresh window: each agent lists its first page again.
  await wb.page.reload();
  await wb.openSpillway();
  await waitFor(async () => (await lastRow())?.label === `Show ${SESSION_PAGE} more` || undefined, 'the first page listed', 60_000);
  // The oldest session's chart, opened from the command palette (its row is not listed), found by its id.
  const oldest = idOf(SESSIONS - 1);
  await wb.runCommand('Spillway: Show Context Chart');
  await wb.answerInput(oldest);
  const frame = wb.chartFrame();
  await frame.locator('#chart[data-bars]').waitFor({ state: 'attached', timeout: 30_000 });
  await frame.locator('#turns summary').click();
  await frame.locator('#turns button.reveal').first().click();
  // Its blob row selected in the tree, under the oldest session's row, every page listed up to it.
  const selected = await waitFor(async () => (await wb.treeRows()).find((r) => r.selected && r.level === 3), 'the revealed blob selected', 30_000);
  expect(selected.aria).toContain(`file toolu_${String(SESSIONS - 1).padStart(20, '0')}.txt`);
  await wb.rowByAria(`session ${oldest}`).waitFor({ state: 'visible' });
  await wb.screenshot('revealed-past-the-page');
});
