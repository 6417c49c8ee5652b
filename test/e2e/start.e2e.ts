// The README's first command as a newcomer types it: `npm start` (here with
// --code-server and a free port, from inside npm like the README's line) must
// print an http://127.0.0.1 address whose page shows the Spills view open and
// focused on the agent folders of the user's HOME, with no chat or secondary
// side bar taking the width. Screenshot: test-results/e2e-start/.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { buildFixtureHome } from '../fixtures/build-home';
import { freePort, launchChromium, stopGroup, waitFor } from './harness';

const repo = path.resolve(__dirname, '../..');
const shots = path.join(repo, 'test-results', 'e2e-start');
let start: ChildProcess | undefined;
let browser: Browser | undefined;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-start-'));

afterAll(async () => {
  await browser?.close();
  // npm, start.mjs and code-server share one process group: stop them all.
  if (start?.pid) await stopGroup(start.pid);
  fs.rmSync(tmp, { recursive: true, force: true });
});

it('`npm start` prints a local address that opens VS Code on the Spills view, focused, with the real HOME\'s sessions', async () => {
  fs.mkdirSync(shots, { recursive: true });
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home);
  const fixture = await buildFixtureHome(home, {});
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(CLAUDE_|PI_|XDG_|GEMINI|OPENCODE|SPILLWAY|npm_)/i.test(k)));
  const port = await freePort();
  start = spawn('npm', ['start', '--', '--code-server', '--port', String(port)], {
    cwd: repo,
    env: { ...clean, ...fixture.env, SPILLWAY_START_DIR: path.join(tmp, 'state') },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  start.stdout!.on('data', (d) => (out += String(d)));
  start.stderr!.on('data', (d) => (out += String(d)));
  const url = await waitFor(() => /http:\/\/127\.0\.0\.1:\d+\/\S*/.exec(out)?.[0], `npm start to print its address (output so far: ${out})`, 300_000);
  expect(url).toContain(`127.0.0.1:${port}`);

  browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(url, { timeout: 120_000 }); // a loaded machine took over 30 s to serve the first page
  await page.bringToFront();
  const spills = page.locator('[id="workbench.view.extension.spillway"]');
  await spills.waitFor({ state: 'visible', timeout: 120_000 });
  // The Claude Code session of the fixture HOME is listed (the tree reads HOME as the extension sees it).
  const claudeRow = spills.locator('.monaco-list-row', { hasText: 'Claude Code' }).first();
  await claudeRow.waitFor({ state: 'visible', timeout: 60_000 });
  // Focus is in the Spills view, and nothing sits on the right of the editor.
  const focused = () => page.evaluate(() => document.activeElement?.closest('[id="workbench.view.extension.spillway"]') !== null);
  await waitFor(async () => (await focused()) || undefined, 'focus in the Spills view', 30_000).catch(async (err) => {
    await page.screenshot({ path: path.join(shots, '00-npm-start-unfocused.png') });
    const where = await page.evaluate(() => `${document.activeElement?.tagName}.${document.activeElement?.className} in ${document.activeElement?.closest('[id]')?.id} (page focused: ${document.hasFocus()})`);
    throw new Error(`${(err as Error).message}; focus is on ${where}`);
  });
  const auxiliaryVisible = await page.locator('.part.auxiliarybar').isVisible();
  expect(auxiliaryVisible).toBe(false);
  await page.screenshot({ path: path.join(shots, '01-npm-start.png') });
  // Only what a user needs was printed (progress, the address): code-server's own lines (timestamped, its missing
  // vsda.js, an unreachable extension gallery) went to the log, which has them.
  expect(out).not.toMatch(/vsda|File not found|gallery|^\[\d{4}-\d\d-\d\dT/im);
  const log = fs.readFileSync(path.join(repo, '.cache', 'logs', 'start.log'), 'utf8');
  expect(log).toContain(`code-server on 127.0.0.1:${port}`);
  expect(log.slice(log.lastIndexOf(`code-server on 127.0.0.1:${port}`))).toMatch(/HTTP server listening/);
}, 600_000);
