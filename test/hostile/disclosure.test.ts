// Files outside the roots reached through what the agents' folders name or
// link to: nothing of them is listed, printed or deleted. And one hostile
// transcript line costs one counted line, not the session.
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseDirs, hostileFile, run, SECRET, write, type CaseDirs } from './helpers';

const { base, sentinel } = hostileFile('disclosure');

const UUID = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';

/** A Claude Code session: transcript lines beside `<uuid>/tool-results/` holding `blobs`. */
async function claudeSession(c: CaseDirs, lines: unknown[] | undefined, blobs: Record<string, string>): Promise<{ transcript: string; results: string }> {
  const project = path.join(c.claudeProjects, '-home-dev-w');
  const transcript = path.join(project, `${UUID}.jsonl`);
  if (lines) await write(transcript, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  const results = path.join(project, UUID, 'tool-results');
  for (const [name, body] of Object.entries(blobs)) await write(path.join(results, name), body);
  return { transcript, results };
}

interface ListJson {
  sessions: Array<{ source: string; id: string; title: string | null; cwd: string | null; blobs: Array<{ path: string }> }>;
  skipped: number;
}

async function list(c: CaseDirs): Promise<ListJson> {
  const r = await run(['list', '--json'], { env: c.env });
  expect(r.timedOut).toBe(false);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout.toString('utf8')) as ListJson;
}

async function grep(c: CaseDirs, pattern: string): Promise<string> {
  const r = await run(['grep', pattern, '--engine', 'node'], { env: c.env });
  expect(r.timedOut).toBe(false);
  return r.stdout.toString('utf8') + r.stderr;
}

describe('pi details.fullOutputPath', () => {
  it('names a pi-looking log outside TMPDIR, or in a symlinked folder of TMPDIR: never listed, never grepped', async () => {
    const c = await caseDirs(base(), 'pi-full-output');
    await fsp.symlink(sentinel(), path.join(c.tmp, 'linked'));
    const legit = await write(path.join(c.tmp, 'pi-bash-0123abcd0123abcd.log'), 'legit log line\n');
    const named = [legit, path.join(sentinel(), 'pi-bash-deadbeefdeadbeef.log'), path.join(c.tmp, 'linked', 'pi-bash-deadbeefdeadbeef.log')];
    const lines = [
      { type: 'session', id: 'pi-session-1', cwd: '/w', timestamp: new Date().toISOString() },
      ...named.map((file, i) => ({
        type: 'message',
        id: `r${i}`,
        message: { role: 'toolResult', toolCallId: `call${i}`, toolName: 'bash', content: [{ type: 'text', text: 'tail' }], details: { fullOutputPath: file } },
      })),
    ];
    await write(path.join(c.piSessions, '--w--', `2026-01-01T00-00-00-000Z_pi-session-1.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const listed = (await list(c)).sessions.flatMap((s) => s.blobs.map((b) => b.path));
    expect(listed).toContain(legit);
    expect(listed.filter((p) => p !== legit)).toEqual([]);
    expect(await grep(c, SECRET)).not.toContain(SECRET);
    const clean = await run(['clean', '--older-than', '0s', '--yes'], { env: c.env });
    expect(clean.timedOut).toBe(false);
  });
});

describe('a symlinked transcript', () => {
  it('is not read: its prompt and cwd never show as the session title', async () => {
    const c = await caseDirs(base(), 'symlinked-transcript');
    const { transcript } = await claudeSession(c, undefined, { 'toolu_01.txt': 'a blob\n' });
    await fsp.symlink(path.join(sentinel(), 'transcript.jsonl'), transcript);
    const out = await list(c);
    expect(out.sessions).toHaveLength(1); // the blobs are still listed
    expect(JSON.stringify(out)).not.toContain(SECRET);
    const human = await run(['list'], { env: c.env });
    expect(human.stdout.toString('utf8')).not.toContain(SECRET);
  });
});

describe('hard links', () => {
  it('a blob hard-linked to a file outside is neither grepped, shown nor deleted', async () => {
    const c = await caseDirs(base(), 'hardlink-blob');
    const { results } = await claudeSession(c, [{ type: 'user', sessionId: UUID, cwd: '/w', message: { content: 'hello' } }], { 'toolu_02.txt': 'own blob\n' });
    const linked = path.join(results, 'toolu_01.txt');
    await fsp.link(path.join(sentinel(), 'secret.txt'), linked);
    expect(await grep(c, SECRET)).not.toContain(`${SECRET} private`);
    const show = await run(['show', linked], { env: c.env });
    expect(show.stdout.toString('utf8')).not.toContain(SECRET);
    await run(['clean', '--older-than', '0s', '--yes'], { env: c.env });
    expect((await fsp.lstat(linked)).nlink).toBe(2); // refused: its other name lies outside
  });
});

describe("goose's folder in TMPDIR, read by ripgrep for goose's names", () => {
  it("never reaches through a symlink or a FIFO named like goose's, nor another program's file", async () => {
    const c = await caseDirs(base(), 'goose-tmp-folder');
    const folder = path.join(c.tmp, 'goose_mcp_responses');
    const own = await write(path.join(folder, 'mcp_response_20260101_000000.txt'), 'own response: needle-7f3a\n');
    await fsp.symlink(path.join(sentinel(), 'secret.txt'), path.join(folder, 'mcp_response_20260101_000001.txt'));
    execFileSync('mkfifo', [path.join(folder, 'mcp_response_20260101_000002.txt')]); // nobody writes to it: a read would block
    await write(path.join(folder, 'notes.txt'), `${SECRET} another program's\n`);
    expect((await list(c)).skipped, 'the symlink and the FIFO named like responses').toBe(2);
    for (const pattern of [SECRET, 'needle-7f3a']) {
      const r = await run(['grep', pattern, '--engine', 'rg'], { env: c.env });
      expect(r.timedOut).toBe(false);
      const out = r.stdout.toString('utf8');
      expect(out).not.toContain(SECRET);
      if (pattern !== SECRET) expect(out).toContain(own);
    }
  });
});

describe('TMPDIR is shared: what another user made there is none of your outputs', () => {
  const NOBODY = 65534;
  const asRoot = process.getuid?.() === 0;

  it('refuses a goose folder others may write to: reported, never listed, grepped or cleaned', async () => {
    const c = await caseDirs(base(), 'tmp-writable-by-others');
    const folder = path.join(c.tmp, 'goose_mcp_responses');
    const planted = await write(path.join(folder, 'mcp_response_20990101_000000.txt'), `${SECRET} planted\n`);
    await fsp.chmod(folder, 0o777);
    const r = await run(['list', '--json'], { env: c.env });
    expect(r.stderr).toContain(`refusing ${folder}: writable by others`);
    expect((JSON.parse(r.stdout.toString('utf8')) as ListJson).sessions.flatMap((s) => s.blobs.map((b) => b.path))).not.toContain(planted);
    expect(await grep(c, SECRET)).not.toContain(`${SECRET} planted`);
    await run(['clean', '--older-than', '0s', '--yes'], { env: c.env });
    expect(await fsp.readFile(planted, 'utf8')).toContain(SECRET);
  });

  // Only root can make a file another user owns.
  it.runIf(asRoot)("skips, and counts, goose responses and pi logs another user owns; refuses another user's goose folder", async () => {
    const c = await caseDirs(base(), 'tmp-foreign-owner');
    const folder = path.join(c.tmp, 'goose_mcp_responses');
    const own = await write(path.join(folder, 'mcp_response_20260101_000000.txt'), 'own response\n');
    const theirs = await write(path.join(folder, 'mcp_response_20990101_000000.txt'), `${SECRET} planted\n`);
    const ownLog = await write(path.join(c.tmp, 'pi-bash-00000000000000aa.log'), 'own log\n');
    const theirLog = await write(path.join(c.tmp, 'pi-bash-00000000000000bb.log'), `${SECRET} planted log\n`);
    for (const file of [theirs, theirLog]) await fsp.lchown(file, NOBODY, NOBODY);
    const out = await list(c);
    const listed = out.sessions.flatMap((s) => s.blobs.map((b) => b.path));
    expect(listed).toEqual(expect.arrayContaining([own, ownLog]));
    expect(listed).not.toContain(theirs);
    expect(listed).not.toContain(theirLog);
    expect(out.skipped).toBeGreaterThanOrEqual(2);
    expect(await grep(c, SECRET)).not.toContain('planted');
    await run(['clean', '--older-than', '0s', '--yes'], { env: c.env });
    for (const file of [theirs, theirLog]) expect(await fsp.readFile(file, 'utf8')).toContain(SECRET);

    await fsp.lchown(folder, NOBODY, NOBODY);
    const r = await run(['list', '--json'], { env: c.env });
    expect(r.stderr).toContain(`refusing ${folder}: owned by another user`);
  });
});

describe('a deeply nested transcript line', () => {
  it('costs at most that line, not the session', async () => {
    const c = await caseDirs(base(), 'nested-line');
    const depth = 20_000;
    const nested = '['.repeat(depth) + ']'.repeat(depth);
    const lines = [
      { type: 'user', sessionId: UUID, cwd: '/w', message: { content: 'the real title' } },
      `{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":${nested}}}]}}`,
      `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_01","content":${nested}}]}}`,
      { type: 'custom-title', customTitle: 'the real title' },
    ];
    await claudeSession(c, lines, { 'toolu_01.txt': 'blob\n' });
    const out = await list(c);
    const session = out.sessions.find((s) => s.id === UUID);
    expect(session?.title).toBe('the real title');
    expect(session?.blobs).toHaveLength(1);
    const turns = await run(['turns', UUID], { env: c.env });
    expect(turns.code).toBe(0);
  });
});

describe('a deeply nested manifest record', () => {
  it('costs its arguments, not the session', async () => {
    const c = await caseDirs(base(), 'nested-manifest');
    const folder = path.join(c.spills, 'session-nested');
    const depth = 20_000;
    await write(path.join(folder, 'blob.txt'), 'blob\n');
    const nested = '['.repeat(depth) + ']'.repeat(depth);
    await write(path.join(folder, 'spillway.jsonl'), `{"v":1,"file":"blob.txt","tool":"Bash","toolCallId":"c1","args":${nested},"bytes":5,"lines":1,"sha256":"","createdAt":"","sessionId":"nested"}\n`);
    const session = (await list(c)).sessions.find((s) => s.id === 'nested');
    expect(session?.blobs.map((b) => path.basename(b.path))).toEqual(['blob.txt']);
  });
});
