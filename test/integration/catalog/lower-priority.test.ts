// The lower-priority layouts (goose, OpenHands, Roo Code, Cline): each is
// listed with its source, tool and session, and a clean of goose's or Cline's
// TMPDIR folder deletes only their own files.
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { refusal } from '../../../src/catalog/clean/clean';
import { CLINE_SESSION_ID } from '../../../src/catalog/sources/cline';
import { GOOSE_SESSION_ID } from '../../../src/catalog/sources/goose';
import type { SessionInfo } from '../../../src/catalog/types';
import { buildFixtureHome, type FixtureHome, type LowerPriorityFixture } from '../../fixtures/build-home';
import { ensureBuilt, runCli } from './helpers';

let dir: string;
let fx: FixtureHome;
let lp: LowerPriorityFixture;
let catalog: Catalog;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-lower-priority-'));
  fx = await buildFixtureHome(dir, { realClaude: false, lowerPriority: true });
  lp = fx.lowerPriority!;
  catalog = new Catalog({ env: fx.env, roots: fx.userRoots });
  await catalog.scan();
});
afterEach(async () => {
  await catalog.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

const sessionOf = (blob: string): SessionInfo => catalog.session(catalog.blob(blob)!.sessionKey)!;
const paths = (s: SessionInfo | undefined): string[] => (s?.blobs.map((b) => b.path) ?? []).sort();
const snapshot = (files: string[]): Promise<string[]> => Promise.all(files.map((f) => fsp.readFile(f, 'utf8')));

describe('lower-priority layouts are listed', () => {
  it('goose: one session for goose_mcp_responses, time from the file name, no tool (nothing on disk names it)', async () => {
    const s = catalog.findSessions(GOOSE_SESSION_ID)[0];
    expect(s).toMatchObject({ source: 'goose', dir: lp.goose.dir, title: 'goose MCP responses', skipped: 1 });
    expect(paths(s)).toEqual([...lp.goose.blobs].sort());
    const [micro, whole] = lp.goose.blobs.map((b) => catalog.blob(b)!);
    expect(micro!.tool).toBeUndefined();
    expect(micro).toMatchObject({ kind: 'tool-result', attribution: 'none', createdAt: '2026-03-04T10:15:00.123Z', bytes: (await fsp.stat(lp.goose.blobs[0]!)).size });
    expect(whole!.createdAt).toBe('2026-03-04T10:15:02.000Z');
  });

  it('cline: one session for $TMPDIR/cline, tool "command"', async () => {
    const s = catalog.findSessions(CLINE_SESSION_ID)[0];
    expect(s).toMatchObject({ source: 'cline', dir: lp.cline.dir });
    expect(paths(s)).toEqual([...lp.cline.blobs].sort());
    for (const b of lp.cline.blobs) expect(catalog.blob(b)).toMatchObject({ tool: 'command', kind: 'shell-output', attribution: 'name' });
  });

  it('roo-code: one session per task, in VS Code and VSCodium globalStorage', async () => {
    for (const task of lp.roo) {
      const s = sessionOf(task.blob);
      expect(s).toMatchObject({ source: 'roo-code', id: task.taskId, dir: task.dir });
      expect(paths(s)).toEqual([task.blob]);
      expect(catalog.blob(task.blob)).toMatchObject({ tool: 'command', kind: 'shell-output', attribution: 'name' });
    }
    expect(catalog.knownRoots().filter((r) => r.sources !== '*' && r.sources.includes('roo-code')).map((r) => path.basename(path.dirname(path.dirname(path.dirname(r.path)))))).toEqual(['Code', 'Code - Insiders', 'VSCodium']);
  });

  it('openhands: one session per conversation (default store and a user root), tool from the file name', async () => {
    for (const convo of lp.openhands) {
      const files = Object.values(convo.blobs);
      const s = sessionOf(files[0]!);
      expect(s).toMatchObject({ source: 'openhands', id: convo.conversationId, dir: convo.dir });
      expect(paths(s)).toEqual([...files].sort());
      for (const [tool, file] of Object.entries(convo.blobs)) expect(catalog.blob(file), tool).toMatchObject({ tool, attribution: 'name' });
    }
    expect(catalog.blob(lp.openhands[0]!.blobs.terminal!)!.kind).toBe('shell-output');
    expect(catalog.blob(lp.openhands[0]!.blobs.file_editor!)!.kind).toBe('tool-result');
    // The SDK's conversation is found only because its folder was given as a root.
    const defaultsOnly = new Catalog({ env: fx.env });
    await defaultsOnly.scan();
    expect(defaultsOnly.blob(lp.openhands[0]!.blobs.terminal!)).toBeDefined();
    expect(defaultsOnly.blob(lp.openhands[1]!.blobs.browser_use!)).toBeUndefined();
    await defaultsOnly.dispose();
  });

  it('lists nothing else of those folders, nor TMPDIR look-alikes', () => {
    const listed = new Set(catalog.sessions().flatMap((s) => s.blobs.map((b) => b.path)));
    for (const f of [...lp.untouchable, ...lp.manifests, lp.goose.symlink]) expect(listed.has(f), f).toBe(false);
  });

  it('is found by shape under a user root too, without the default roots', async () => {
    const scoped = new Catalog({ env: fx.env, useDefaultRoots: false, roots: [path.join(fx.home, '.config', 'VSCodium', 'User', 'globalStorage'), path.join(fx.home, '.openhands')] });
    await scoped.scan();
    expect(scoped.sessions().map((s) => `${s.source}:${s.id}`).sort()).toEqual([`openhands:${lp.openhands[0]!.conversationId}`, `roo-code:${lp.roo[1]!.taskId}`]);
    await scoped.dispose();
  });
});

describe('cleaning goose and Cline touches only their files', () => {
  for (const which of ['goose', 'cline'] as const) {
    it(`${which}: a session clean deletes exactly its files; other TMPDIR content and manifests stay byte for byte`, async () => {
      const keep = [...lp.untouchable, ...lp.manifests, fx.claude.outsideTarget, fx.pi.bashLog];
      const before = await snapshot(keep);
      const session = catalog.findSessions(which === 'goose' ? GOOSE_SESSION_ID : CLINE_SESSION_ID)[0]!;
      const result = await catalog.executeClean(await catalog.planClean({ kind: 'session', sessionKey: session.key }));
      expect(result.deleted.map((d) => d.path).sort()).toEqual([...lp[which].blobs].sort());
      expect(result.failed).toEqual([]);
      expect(result.manifestsRewritten).toEqual([]);
      for (const b of lp[which].blobs) await expect(fsp.stat(b)).rejects.toThrow();
      expect(await snapshot(keep)).toEqual(before);
      expect((await fsp.lstat(lp.goose.symlink)).isSymbolicLink()).toBe(true);
      expect(catalog.session(session.key)).toBeUndefined();
    });
  }

  it('refuses any other file in or near those folders, even by path', async () => {
    const roots = catalog.knownRoots();
    for (const f of lp.untouchable) expect(await refusal(f, roots), f).toBe('not an agent output file of a shared folder');
    for (const f of lp.manifests) expect(await refusal(f, roots), f).toBe('not an agent output file of a shared folder');
    expect(await refusal(lp.goose.symlink, roots)).toBe('is a symlink');
    for (const f of [...lp.goose.blobs, ...lp.cline.blobs]) expect(await refusal(f, roots), f).toBeUndefined();
    const plan = await catalog.planClean({ kind: 'blobs', paths: [...lp.untouchable, lp.goose.blobs[0]!] });
    expect(plan.items.map((i) => i.path)).toEqual([lp.goose.blobs[0]]);
    expect(plan.refused.map((r) => r.path)).toEqual(lp.untouchable);
  });

  it('retention over everything reaches nothing under TMPDIR but the agents\' own files', async () => {
    const plan = await catalog.planClean({ kind: 'retention', olderThanMs: 0, now: Date.now() + 86_400_000 });
    const underTmp = plan.items.map((i) => i.path).filter((p) => p.startsWith(fx.env.TMPDIR! + path.sep)).sort();
    expect(underTmp).toEqual([fx.pi.bashLog, ...lp.goose.blobs, ...lp.cline.blobs].sort());
  });
});

describe('live', () => {
  const until = (test: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => (test() ? resolve() : void setTimeout(check, 20));
      check();
    });

  it('a new goose response joins the goose session', async () => {
    await catalog.watch();
    const fresh = path.join(lp.goose.dir, 'mcp_response_20260304_120000.000001.txt');
    await fsp.writeFile(fresh, 'late response\n', { mode: 0o644 });
    await until(() => catalog.blob(fresh) !== undefined);
    expect(sessionOf(fresh)).toMatchObject({ source: 'goose', id: GOOSE_SESSION_ID });
  });

  it('a new Roo Code task appears as its own roo-code session (not a Claude Code one)', async () => {
    await catalog.watch();
    const tasks = path.dirname(path.dirname(lp.roo[0]!.dir));
    const fresh = path.join(tasks, '0195a1b2-c3d4-7e5f-8a9b-123456789abc', 'command-output', 'cmd-1772619500000.txt');
    await fsp.mkdir(path.dirname(fresh), { recursive: true });
    await fsp.writeFile(fresh, 'npm ERR! missing script: lint\n');
    await until(() => catalog.blob(fresh) !== undefined);
    expect(sessionOf(fresh)).toMatchObject({ source: 'roo-code', id: '0195a1b2-c3d4-7e5f-8a9b-123456789abc' });
  });
});

describe('spillway CLI', () => {
  it('lists the four layouts and cleans the goose session alone', async () => {
    ensureBuilt();
    const roots = fx.userRoots.flatMap((r) => ['--root', r]);
    const list = await runCli(['list', '--json', ...roots], fx.env);
    expect(list.code, list.stderr).toBe(0);
    const sources = new Set((JSON.parse(list.stdout) as { sessions: Array<{ source: string }> }).sessions.map((s) => s.source));
    for (const s of ['goose', 'openhands', 'roo-code', 'cline']) expect(sources.has(s), s).toBe(true);
    const before = await snapshot([...lp.untouchable, ...lp.manifests, ...lp.cline.blobs]);
    const run = await runCli(['clean', '--session', GOOSE_SESSION_ID, '--yes', '--json'], fx.env);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { deleted: string[] }).deleted.sort()).toEqual([...lp.goose.blobs].sort());
    expect(await snapshot([...lp.untouchable, ...lp.manifests, ...lp.cline.blobs])).toEqual(before);
  });
});

describe('a file time past what a Date holds', () => {
  it('is shown clamped, and its session is still described and listed', async () => {
    // tmpfs (where TMPDIR often lives) takes any time; ext4 caps it at 2446.
    const base = await fsp.mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'catalog-far-future-'));
    try {
      const home = await buildFixtureHome(base, { realClaude: false, lowerPriority: true });
      const [blob] = home.lowerPriority!.goose.blobs;
      await fsp.utimes(blob!, 9e12, 9e12);
      const far = (await fsp.stat(blob!)).mtimeMs;
      const other = new Catalog({ env: home.env, roots: home.userRoots });
      try {
        await other.scan();
        const s = other.findSessions(GOOSE_SESSION_ID)[0];
        expect(paths(s)).toEqual([...home.lowerPriority!.goose.blobs].sort());
        expect(Date.parse(s!.updatedAt)).toBe(Math.min(far, 8.64e15));
        ensureBuilt();
        for (const args of [['clean', '--session', GOOSE_SESSION_ID, '--dry-run'], ['clean', '--max-total', '1B', '--dry-run', '--json']]) {
          const r = await runCli(args, home.env);
          expect(r.stderr).toBe('');
          expect(r.code).toBe(0);
        }
      } finally {
        await other.dispose();
      }
    } finally {
      await fsp.rm(base, { recursive: true, force: true });
    }
  });
});
