// An agent with more sessions than the tree lists at first, and a session
// with more blobs, in a real VS Code (code-server + Chromium, the packaged
// .vsix): a page of rows, then a row that lists the next page, until the
// oldest is there; a reveal past the listed rows lists their pages first.
// Screenshots: test-results/e2e-many/.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PAGE } from '../../src/extension/treeModel';
import { installVsix, launchChromium, openWorkbench, startCodeServer, waitFor, type Workbench, WORKBENCH_SETTINGS, type CodeServer } from './harness';

const repo = path.resolve(__dirname, '../..');
const shots = path.join(repo, 'test-results', 'e2e-many');
/** Two pages and a few: the last "Show more" row lists fewer than a page. */
const SESSIONS = PAGE * 2 + 7;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-many-'));
let server: CodeServer | undefined;
let browser: Browser | undefined;
let wb: Workbench;

/** Session i's id; session 0 is the newest. */
const idOf = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
/** The newest session (in /home/dev/big) spilled more blobs than a page: blob 0 the newest, BIG - 1 the oldest. */
const BIG = PAGE + 5;
const blobName = (session: number, j: number): string => `toolu_${String(session).padStart(12, '0')}${String(j).padStart(8, '0')}.txt`;

/** Claude Code sessions of spilled Bash outputs (one each, BIG for session 0), session i last changed i minutes ago. */
function writeSessions(home: string): void {
  const project = path.join(home, '.claude', 'projects', '-home-dev-many');
  for (let i = 0; i < SESSIONS; i++) {
    const id = idOf(i);
    const folder = path.join(project, id, 'tool-results');
    fs.mkdirSync(folder, { recursive: true });
    const sessionAt = Date.now() - i * 60_000;
    const lines: unknown[] = [];
    for (let j = (i === 0 ? BIG : 1) - 1; j >= 0; j--) {
      const name = blobName(i, j);
      const toolUseId = name.slice(0, -'.txt'.length);
      const blob = path.join(folder, name);
      fs.writeFileSync(blob, `build ${i}.${j}\n`.repeat(200));
      const at = new Date(sessionAt - j * 1000);
      fs.utimesSync(blob, at, at);
      const base = { sessionId: id, cwd: i === 0 ? '/home/dev/big' : '/home/dev/many', isSidechain: false, timestamp: at.toISOString() };
      lines.push(
        { ...base, type: 'assistant', message: { id: `msg_${i}_${j}`, role: 'assistant', model: 'm', content: [{ type: 'tool_use', id: toolUseId, name: 'Bash', input: { command: `make step-${i}-${j}` } }], usage: { input_tokens: 10, output_tokens: 5 } } },
        { ...base, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: `<persisted-output>\nFull output saved to: ${blob}\n</persisted-output>` }] } },
      );
    }
    const transcript = path.join(project, `${id}.jsonl`);
    fs.writeFileSync(transcript, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const at = new Date(sessionAt);
    for (const file of [transcript, path.dirname(folder), folder]) fs.utimesSync(file, at, at);
  }
}

beforeAll(async () => {
  fs.rmSync(shots, { recursive: true, force: true });
  fs.mkdirSync(shots, { recursive: true });
  const setup = JSON.parse(execFileSync(process.execPath, [path.join(repo, 'scripts', 'e2e-setup.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as { node24: string; codeServer: string };
  const home = path.join(tmp, 'home');
  writeSessions(home);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(CLAUDE_|PI_|XDG_|GEMINI|OPENCODE|SPILLWAY|TMPDIR$|TMP$|TEMP$)/.test(k)));
  // Only this home: a TMPDIR of its own too (pi's bash logs there would make an agent of their own).
  const env = { ...clean, HOME: home, TMPDIR: path.join(home, 'tmp'), XDG_CACHE_HOME: path.join(home, '.cache'), XDG_STATE_HOME: path.join(home, '.local', 'state'), XDG_DATA_HOME: path.join(home, '.local', 'share') };
  fs.mkdirSync(env.TMPDIR, { recursive: true });
  execFileSync('npm', ['run', '--silent', 'package'], { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = { node: setup.node24, entry: setup.codeServer, extensionsDir: path.join(tmp, 'extensions'), userDataDir: path.join(tmp, 'user-data'), env };
  installVsix(base, path.join(repo, 'spillway.vsix'));
  const folder = path.join(tmp, 'workspace');
  fs.mkdirSync(folder);
  server = await startCodeServer({ ...base, folder, settings: WORKBENCH_SETTINGS });
  browser = await launchChromium();
  wb = await openWorkbench(browser, server, folder, shots);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
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
  // Read at once: a row redrawn since it was counted is asked for again, not waited for (30 s, past the caller's deadline).
  const row = await focused
    .evaluate(
      (r) => ({
        label: r.querySelector('.label-name')?.textContent ?? '',
        description: r.querySelector('.label-description')?.textContent ?? '',
        aria: r.getAttribute('aria-label') ?? '',
        last: r.getAttribute('aria-posinset') === r.getAttribute('aria-setsize'),
      }),
      undefined,
      { timeout: 1000 },
    )
    .catch(() => undefined);
  return row?.last ? row : undefined;
};

/**
 * Show Context Chart from the command palette, the session chosen by typing its id. Its picker comes once the catalog
 * is ready (after a reload, a while after the palette closes): typed sooner, the id went into the closing palette.
 */
async function pickSession(id: string): Promise<void> {
  await wb.runCommand('Spillway: Show Context Chart');
  await wb.page.locator('.quick-input-widget input[placeholder="Choose a session"]').waitFor({ state: 'visible', timeout: 60_000 });
  await wb.answerInput(id);
}

it(`lists ${PAGE} sessions, then a row that lists more, page by page, to the oldest`, async () => {
  await wb.openSpillway();
  const agent = wb.row('Claude Code');
  await agent.waitFor({ state: 'visible', timeout: 60_000 });
  // Every session counted once the first scan is done (rows come in while it goes on).
  const blobs = SESSIONS - 1 + BIG;
  await waitFor(async () => new RegExp(`^${blobs} blobs · `).test((await agent.locator('.label-description').textContent()) ?? ''), `${blobs} blobs on the agent's row`, 60_000);
  await wb.setSideBarWidth(300);
  let last = await waitFor(lastRow, 'the last row focused');
  expect(last).toMatchObject({ label: `Show ${PAGE} more`, description: `${PAGE} of ${SESSIONS}` });
  // The page is the newest sessions (session 0 the newest): the last of them is shown above the row, the next is not.
  await wb.rowByAria(`session ${idOf(PAGE - 1)}`).waitFor({ state: 'visible' });
  expect(await wb.rowByAria(`session ${idOf(PAGE)}`).count()).toBe(0);
  expect(await wb.labelFits(wb.row(`Show ${PAGE} more`)), 'the row read whole at 300 px').toBe(true);
  await wb.screenshotThemes('more-row');

  await wb.page.keyboard.press('Enter');
  last = await waitFor(async () => {
    const row = await lastRow();
    return row && row.label !== `Show ${PAGE} more` ? row : undefined;
  }, 'the next page listed');
  expect(last).toMatchObject({ label: `Show ${SESSIONS - PAGE * 2} more`, description: `${PAGE * 2} of ${SESSIONS}` });

  await wb.row(`Show ${SESSIONS - PAGE * 2} more`).click();
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
  await waitFor(async () => (await lastRow())?.label === `Show ${PAGE} more` || undefined, 'the first page listed', 60_000);
  // The oldest session's chart, opened from the command palette (its row is not listed), found by its id.
  const oldest = idOf(SESSIONS - 1);
  await pickSession(oldest);
  const frame = wb.chartFrame();
  await frame.locator('#chart[data-bars]').waitFor({ state: 'attached', timeout: 30_000 });
  await frame.locator('#turns summary').click();
  await frame.locator('#turns button.reveal').first().click();
  // Its blob row selected in the tree, under the oldest session's row, every page listed up to it.
  const selected = await waitFor(async () => (await wb.treeRows()).find((r) => r.selected && r.level === 3), 'the revealed blob selected', 30_000);
  expect(selected.aria).toContain(`file ${blobName(SESSIONS - 1, 0)}`);
  await wb.rowByAria(`session ${oldest}`).waitFor({ state: 'visible' });
  await wb.screenshot('revealed-past-the-page');
});

it(`lists a session's blobs ${PAGE} at a time too, and reveals one past them`, async () => {
  // The session of BIG blobs alone, by its working folder.
  await wb.openSpillway();
  await wb.runCommand('Spillway: Filter Spills...');
  await wb.answerInput('/home/dev/big');
  await wb.rowByAria(`session ${idOf(0)}`).click(); // expands it
  let last = await waitFor(async () => {
    const row = await lastRow();
    return row?.label === `Show ${BIG - PAGE} more` ? row : undefined;
  }, "the session's first page listed");
  expect(last.description).toBe(`${PAGE} of ${BIG}`);
  // Newest first: blob PAGE - 1 listed, blob PAGE not.
  await wb.rowByAria(`file ${blobName(0, PAGE - 1)}`).waitFor({ state: 'visible' });
  expect(await wb.rowByAria(`file ${blobName(0, PAGE)}`).count()).toBe(0);
  await wb.screenshot('more-blobs');
  await wb.page.keyboard.press('Enter');
  last = await waitFor(async () => {
    const row = await lastRow();
    return row && !row.label.startsWith('Show ') ? row : undefined;
  }, "every blob of the session listed");
  expect(last.aria).toContain(`file ${blobName(0, BIG - 1)}`);
  await wb.runCommand('Spillway: Clear Filter');

  // A fresh window lists a page again; the chart's button for the session's first (oldest) spill reveals that blob.
  await wb.page.reload();
  await wb.openSpillway();
  await waitFor(async () => (await lastRow())?.label === `Show ${PAGE} more` || undefined, 'the first page listed', 60_000);
  await pickSession(idOf(0));
  const frame = wb.chartFrame();
  await frame.locator('#chart[data-bars]').waitFor({ state: 'attached', timeout: 30_000 });
  await frame.locator('#turns summary').click();
  await frame.locator('#turns button.reveal').first().click();
  const selected = await waitFor(async () => (await wb.treeRows()).find((r) => r.selected && r.level === 3), 'the revealed blob selected', 30_000);
  expect(selected.aria).toContain(`file ${blobName(0, BIG - 1)}`);
});
