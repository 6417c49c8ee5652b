// A bucket in the Spills tree, in a real VS Code (code-server + Chromium, the packaged .vsix) against a real Ceph
// RGW: `spillway.remoteRoots` shows the s3:// root as a top row beside the local agents, its agents, sessions and
// blobs listed under it, and a remote blob opens read-only at a line range read by ranged GETs.
// Screenshots: test-results/e2e-remote/.
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRgw, type Rgw } from '../s3/rgw';
import { installVsix, launchChromium, openWorkbench, startCodeServer, waitFor, type Workbench, WORKBENCH_SETTINGS, type CodeServer } from './harness';

const repo = path.resolve(__dirname, '../..');
const shots = path.join(repo, 'test-results', 'e2e-remote');
const BUCKET = 'team-spills';
const ROOT = `s3://${BUCKET}/ci`;
const LINES = 80_000;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-remote-'));
let rgw: Rgw | undefined;
let server: CodeServer | undefined;
let browser: Browser | undefined;
let wb: Workbench;

/** One local Claude Code session with one spilled Bash output: the local agent beside the remote root. */
function writeLocalSession(home: string): void {
  const id = '11111111-2222-4333-8444-555555555555';
  const project = path.join(home, '.claude', 'projects', '-home-dev-app');
  const folder = path.join(project, id, 'tool-results');
  fs.mkdirSync(folder, { recursive: true });
  const toolUseId = 'toolu_local000001';
  const blob = path.join(folder, `${toolUseId}.txt`);
  fs.writeFileSync(blob, 'local build line\n'.repeat(300));
  const base = { sessionId: id, cwd: '/home/dev/app', isSidechain: false, timestamp: new Date().toISOString() };
  const lines = [
    { ...base, type: 'assistant', message: { id: 'msg_1', role: 'assistant', model: 'm', content: [{ type: 'tool_use', id: toolUseId, name: 'Bash', input: { command: 'make' } }], usage: { input_tokens: 10, output_tokens: 5 } } },
    { ...base, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: `<persisted-output>\nFull output saved to: ${blob}\n</persisted-output>` }] } },
  ];
  fs.writeFileSync(path.join(project, `${id}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

beforeAll(async () => {
  fs.rmSync(shots, { recursive: true, force: true });
  fs.mkdirSync(shots, { recursive: true });
  rgw = await startRgw();
  await rgw.createBucket(BUCKET);
  const c = rgw.client();
  const body = Array.from({ length: LINES }, (_, i) => `ci step ${i + 1} <b>not html</b> ${'.'.repeat(i % 30)}\n`).join('');
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ci/claude-code/run-412/4f2a.txt', Body: body }));
  // Its record, as the uploader puts it beside the blob: the row says what made it.
  const record = { v: 1, file: 'bash-1.txt', tool: 'Bash', toolCallId: 'toolu_ci1', args: { command: 'make ci' }, bytes: Buffer.byteLength(body), lines: LINES, createdAt: new Date().toISOString(), sessionId: 'run-412' };
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ci/claude-code/run-412/4f2a.json', Body: JSON.stringify(record) }));
  // The session's transcript, as the uploader copies it: two calls, the first of which ran the spilled command.
  const line = { sessionId: 'run-412', cwd: '/ci/app', isSidechain: false, timestamp: new Date().toISOString() };
  const transcript = [
    { ...line, type: 'user', message: { role: 'user', content: 'run the ci build' } },
    { ...line, type: 'assistant', message: { id: 'msg_ci1', role: 'assistant', model: 'm', content: [{ type: 'tool_use', id: 'toolu_ci1', name: 'Bash', input: { command: 'make ci' } }], usage: { input_tokens: 1200, output_tokens: 20 } } },
    { ...line, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_ci1', content: 'digest of make ci' }] } },
    { ...line, type: 'assistant', message: { id: 'msg_ci2', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'The build failed at step 40000.' }], usage: { input_tokens: 2600, output_tokens: 12 } } },
  ];
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ci/claude-code/run-412/transcript.jsonl', Body: transcript.map((l) => JSON.stringify(l)).join('\n') + '\n' }));
  await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ci/codex/run-413/9b1c.txt', Body: 'short\n' }));

  const setup = JSON.parse(execFileSync(process.execPath, [path.join(repo, 'scripts', 'e2e-setup.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as { node24: string; codeServer: string };
  const home = path.join(tmp, 'home');
  writeLocalSession(home);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(CLAUDE_|PI_|XDG_|GEMINI|OPENCODE|SPILLWAY|AWS_|TMPDIR$|TMP$|TEMP$)/.test(k)));
  // The bucket's endpoint and keys reach the extension the SDK's usual way: the environment VS Code runs in.
  const env = { ...clean, ...rgw.env, HOME: home, TMPDIR: path.join(home, 'tmp'), XDG_CACHE_HOME: path.join(home, '.cache'), XDG_STATE_HOME: path.join(home, '.local', 'state'), XDG_DATA_HOME: path.join(home, '.local', 'share') };
  fs.mkdirSync(env.TMPDIR, { recursive: true });
  execFileSync('npm', ['run', '--silent', 'package'], { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = { node: setup.node24, entry: setup.codeServer, extensionsDir: path.join(tmp, 'extensions'), userDataDir: path.join(tmp, 'user-data'), env };
  installVsix(base, path.join(repo, 'spillway.vsix'));
  const folder = path.join(tmp, 'workspace');
  fs.mkdirSync(folder);
  server = await startCodeServer({ ...base, folder, settings: { ...WORKBENCH_SETTINGS, 'spillway.remoteRoots': [ROOT] } });
  browser = await launchChromium();
  wb = await openWorkbench(browser, server, folder, shots);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await rgw?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const exact = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

it('shows the bucket as a root beside the local agents and opens a remote blob at a line range', async () => {
  await wb.openSpillway();
  // Beside the local agent: the remote root, a top row of its own.
  await wb.row(exact('Claude Code')).waitFor({ state: 'visible', timeout: 60_000 });
  const root = wb.row(exact(ROOT));
  await root.waitFor({ state: 'visible', timeout: 60_000 });
  const top = (await wb.treeRows()).filter((r) => r.level === 1).map((r) => r.label);
  expect(top).toEqual(expect.arrayContaining(['Claude Code', ROOT]));

  // Its agents, a session, a blob.
  await root.click();
  await wb.row(exact('claude-code')).waitFor({ state: 'visible', timeout: 30_000 });
  await wb.row(exact('codex')).waitFor({ state: 'visible' });
  await wb.row(exact('claude-code')).click();
  await wb.row(exact('run-412')).click();
  // Named as a local blob is: its size and lines, then the tool and command that made it.
  const blob = wb.row(exact('3.5 MB · 80,000 lines'));
  await blob.waitFor({ state: 'visible' });
  await waitFor(async () => (await wb.treeRows()).find((r) => r.label === ROOT)?.description.includes('2 blobs'), 'the root row counting its blobs');
  expect((await wb.treeRows()).find((r) => r.label === '3.5 MB · 80,000 lines')?.description).toBe('Bash make ci');
  await wb.screenshot('remote-root-in-tree');

  // Open at a line range: only those lines, read-only, the range selected below the header.
  await wb.contextMenu(blob, 'Open at Line Range...');
  await wb.answerInput('40000-40009');
  const tab = wb.page.locator('.tabs-container .tab', { hasText: '4f2a.txt (lines 40000-40009)' });
  await tab.waitFor({ state: 'visible', timeout: 30_000 });
  const text = wb.page.locator('.editor-instance .view-lines');
  // The editor draws spaces as no-break spaces.
  const shownText = async () => ((await text.textContent()) ?? '').replace(/\u00a0/g, ' ');
  await waitFor(async () => (await shownText()).includes('ci step 40000'), 'the slice in the editor');
  const shown = await shownText();
  // Markup in the output is text, never rendered.
  expect(shown).toContain('<b>not html</b>');
  expect(shown).not.toContain('ci step 39999 ');
  expect(shown).not.toContain('ci step 40010 ');
  // The ten lines selected, as VS Code counts them (characters, newlines between them).
  const slice = Array.from({ length: 10 }, (_, k) => `ci step ${40000 + k} <b>not html</b> ${'.'.repeat((39999 + k) % 30)}`);
  const status = await wb.selectionStatus();
  expect(status).toContain(`Col ${slice[9]!.length + 1} `);
  expect(status.replace(/,/g, '')).toContain(`(${slice.join('\n').length} selected)`);
  // Read-only: typing changes nothing.
  await wb.page.keyboard.type('x');
  expect(await wb.page.locator('.tabs-container .tab.dirty').count()).toBe(0);
  await wb.screenshotThemes('remote-blob-at-range');
}, 300_000);

it("charts a remote session from the transcript's copy in the bucket", async () => {
  await wb.openSpillway();
  await wb.contextMenu(wb.row(exact('run-412')), 'Show Context Chart');
  const frame = wb.chartFrame();
  const chart = frame.locator('#chart[data-bars]');
  await chart.waitFor({ state: 'attached', timeout: 30_000 });
  expect(Number(await chart.getAttribute('data-bars'))).toBe(2);
  expect(Number(await chart.getAttribute('data-spill-marks'))).toBe(1);
  expect(await frame.locator('#summary').textContent()).toContain('2 turns');
  await wb.screenshotThemes('remote-chart');
  await wb.page.keyboard.press('Control+W');
}, 300_000);

it('finds a line of a remote blob in the Search view and opens it there, read by ranged GETs', async () => {
  await wb.openSpillway();
  await wb.runCommand('Spillway: Search Spills...');
  await wb.answerInput('ci step 40005 ');
  const search = wb.pane('Search');
  const hit = search.locator('.monaco-list-row', { hasText: '40005  ' }).first();
  await hit.waitFor({ state: 'visible', timeout: 30_000 });
  await expect.poll(async () => (await search.textContent()) ?? '').toContain('1 match in 1 blob for "ci step 40005 "');
  const rows = await wb.treeRows('Search');
  expect(rows.find((r) => r.level === 1)?.label).toContain(`run-412 (${ROOT})`);
  await waitFor(async () => (await wb.treeRows('Search')).some((r) => r.level === 2 && r.label === 'Bash make ci'), 'the matched blob named by its record');
  await wb.screenshotThemes('remote-search');
  await hit.click();
  const tab = wb.page.locator('.tabs-container .tab', { hasText: '4f2a.txt (lines 39905-40105)' });
  await tab.waitFor({ state: 'visible', timeout: 30_000 });
  // The matching line selected: the slice's line 103 (two header lines, then 39905 on).
  await waitFor(async () => (await wb.selectionStatus()).startsWith('Ln 103,'), 'the match line selected');
  await search.hover();
  await search.locator('.action-label[aria-label="Clear Search Results"]').click();
}, 300_000);

it("deletes a remote session's copies after asking, and its row goes", async () => {
  await wb.openSpillway();
  await wb.row(exact('codex')).click();
  const session = wb.row(exact('run-413'));
  await session.waitFor({ state: 'visible', timeout: 30_000 });
  await wb.contextMenu(session, "Delete Session's Blobs");
  const dialog = wb.dialog();
  await dialog.waitFor({ state: 'visible' });
  const text = (await dialog.textContent()) ?? '';
  expect(text).toContain(`Delete 1 blob (6 B) of session "run-413" from ${ROOT}?`);
  expect(text).toContain('a bucket has no trash');
  await wb.screenshotThemes('remote-delete-confirm');
  await dialog.locator('.monaco-button', { hasText: /^Delete$/ }).click();
  const keys = async () => ((await rgw!.client().send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((o) => o.Key);
  await waitFor(async () => !(await keys()).includes('ci/codex/run-413/9b1c.txt'), 'the copy to be deleted');
  expect(await keys()).toEqual(['ci/claude-code/run-412/4f2a.json', 'ci/claude-code/run-412/4f2a.txt', 'ci/claude-code/run-412/transcript.jsonl']);
  await waitFor(async () => !(await wb.treeRows()).some((r) => r.label === 'run-413'), 'the session row to go');
  await waitFor(async () => (await wb.treeRows()).some((r) => r.label === 'run-412'), 'the other session listed again');
  await wb.screenshot('remote-deleted');
}, 300_000);
