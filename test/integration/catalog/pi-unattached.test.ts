// pi bash logs in TMPDIR that no pi session names: listed as their own pi
// session, handed to a session as soon as one names them, and cleaned without
// touching anything else in (or next to) TMPDIR.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { refusal } from '../../../src/catalog/clean/clean';
import { UNATTACHED_SESSION_ID } from '../../../src/catalog/sources/pi';
import type { CatalogEvent } from '../../../src/catalog/types';
import { buildFixtureHome, type FixtureHome, type UnattachedPiFixture } from '../../fixtures/build-home';
import { ensureBuilt, runCli } from './helpers';

let dir: string;
let fx: FixtureHome;
let un: UnattachedPiFixture;
let catalog: Catalog;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-pi-unattached-'));
  fx = await buildFixtureHome(dir, { realClaude: false, unattachedPi: true });
  un = fx.pi.unattached!;
  catalog = new Catalog({ env: fx.env, roots: fx.userRoots });
  await catalog.scan();
});
afterEach(async () => {
  await catalog.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

const unattachedSession = () => catalog.findSessions(UNATTACHED_SESSION_ID)[0];

/** Every file's bytes, to prove a clean left them alone. */
async function snapshot(files: string[]): Promise<string[]> {
  return Promise.all(files.map((f) => fsp.readFile(f, 'utf8')));
}

describe('unattached pi bash outputs', () => {
  it('lists a log no session names as its own pi session; the named log stays with its session; nothing else in TMPDIR is listed', async () => {
    const s = unattachedSession();
    expect(s).toMatchObject({ source: 'pi', title: 'unattached pi bash outputs', dir: fx.env.TMPDIR });
    expect(s!.blobs.map((b) => b.path)).toEqual([un.log]);
    expect(s!.blobs[0]).toMatchObject({ tool: 'bash', kind: 'shell-output', attribution: 'none', bytes: (await fsp.stat(un.log)).size });
    expect(s!.skipped).toBe(1); // the symlinked "log"
    expect(catalog.blob(fx.pi.bashLog)!.sessionKey).toBe(catalog.findSessions(fx.pi.sessionId)[0]!.key);
    const listed = new Set(catalog.sessions().flatMap((x) => x.blobs.map((b) => b.path)));
    for (const f of [...un.untouchable, un.symlink, ...un.manifests]) expect(listed.has(f), f).toBe(false);
  });

  it('cleaning the group deletes only the pi logs; TMPDIR content and manifests in and next to it stay byte for byte', async () => {
    const keep = [...un.untouchable, ...un.manifests, fx.claude.outsideTarget];
    const before = await snapshot(keep);
    const result = await catalog.executeClean(await catalog.planClean({ kind: 'session', sessionKey: unattachedSession()!.key }));
    expect(result.deleted.map((d) => d.path)).toEqual([un.log]);
    expect(result.manifestsRewritten).toEqual([]);
    await expect(fsp.stat(un.log)).rejects.toThrow();
    expect(await snapshot(keep)).toEqual(before);
    expect((await fsp.lstat(un.symlink)).isSymbolicLink()).toBe(true);
    expect(unattachedSession()).toBeUndefined();
  });

  it('refuses any other TMPDIR file, even one named like a pi log one folder down', async () => {
    const roots = catalog.knownRoots();
    for (const f of un.untouchable) expect(await refusal(f, roots), f).toBe('not an agent output file of a shared folder');
    expect(await refusal(un.manifests[0]!, roots)).toBe('not an agent output file of a shared folder');
    expect(await refusal(un.log, roots)).toBeUndefined();
    const plan = await catalog.planClean({ kind: 'blobs', paths: [...un.untouchable, un.log] });
    expect(plan.items.map((i) => i.path)).toEqual([un.log]);
    expect(plan.refused.map((r) => r.path)).toEqual(un.untouchable);
    // Retention over everything reaches nothing in TMPDIR but pi's logs.
    const all = await catalog.planClean({ kind: 'retention', olderThanMs: 0, now: Date.now() + 86_400_000 });
    const inTmp = all.items.map((i) => i.path).filter((p) => path.dirname(p) === fx.env.TMPDIR).sort();
    expect(inTmp).toEqual([fx.pi.bashLog, un.log].sort());
  });

  it('a user root at TMPDIR lifts the restriction (the user asked for the whole folder)', async () => {
    const wide = new Catalog({ env: fx.env, roots: [fx.env.TMPDIR!] });
    expect(wide.knownRoots().find((r) => r.path === fx.env.TMPDIR)?.files).toBeUndefined();
    const narrow = catalog.knownRoots().find((r) => r.path === fx.env.TMPDIR);
    expect(narrow?.files?.test(path.basename(un.log))).toBe(true);
    await wide.dispose();
  });

  it('moves a log to the pi session that names it, and back when that session is gone (live)', async () => {
    const events: CatalogEvent[] = [];
    catalog.onDidChange((e) => events.push(e));
    await catalog.watch();
    const until = (test: () => boolean): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => (test() ? resolve() : void setTimeout(check, 20));
        check();
      });
    const groupKey = unattachedSession()!.key;
    const piKey = catalog.findSessions(fx.pi.sessionId)[0]!.key;
    await fsp.appendFile(
      fx.pi.transcript,
      JSON.stringify({ type: 'message', id: 'e10', parentId: 'e9', timestamp: '2026-03-02T09:01:00.000Z', message: { role: 'assistant', content: [{ type: 'toolCall', id: 'call_cc_3', name: 'bash', arguments: { command: 'cc -Wall src/*.c' } }] } }) +
        '\n' +
        JSON.stringify({ type: 'message', id: 'e11', parentId: 'e10', timestamp: '2026-03-02T09:01:05.000Z', message: { role: 'toolResult', toolCallId: 'call_cc_3', toolName: 'bash', content: [{ type: 'text', text: 'tail' }], details: { fullOutputPath: un.log } } }) +
        '\n',
    );
    await until(() => catalog.blob(un.log)?.sessionKey === piKey);
    expect(catalog.blob(un.log)).toMatchObject({ tool: 'bash', args: 'cc -Wall src/*.c', attribution: 'transcript' });
    await until(() => events.some((e) => e.removed.includes(groupKey)));
    expect(catalog.session(groupKey)).toBeUndefined();

    await fsp.rm(fx.pi.transcript);
    await until(() => catalog.blob(un.log)?.sessionKey === groupKey);
    // The session's other log (also no longer named) joins the group too.
    expect(unattachedSession()!.blobs.map((b) => b.path).sort()).toEqual([fx.pi.bashLog, un.log].sort());
  });

  it('a new unattached log appears live', async () => {
    await catalog.watch();
    const fresh = path.join(fx.env.TMPDIR!, 'pi-bash-0f0f0f0f0f0f0f0f.log');
    await fsp.writeFile(fresh, 'make: *** [all] Error 1\n', { mode: 0o644 });
    await new Promise<void>((resolve) => {
      const check = (): void => (catalog.blob(fresh) ? resolve() : void setTimeout(check, 20));
      check();
    });
    expect(catalog.blob(fresh)!.sessionKey).toBe(unattachedSession()!.key);
  });
});

describe('spillway clean --session (CLI)', () => {
  it('deletes the unattached logs and nothing else in TMPDIR', async () => {
    ensureBuilt();
    const before = await snapshot([...un.untouchable, ...un.manifests]);
    const dry = await runCli(['clean', '--session', UNATTACHED_SESSION_ID, '--json'], fx.env);
    expect(dry.code, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as { items: Array<{ path: string }> }).items.map((i) => i.path)).toEqual([un.log]);
    const run = await runCli(['clean', '--session', UNATTACHED_SESSION_ID, '--yes', '--json'], fx.env);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { deleted: string[] }).deleted).toEqual([un.log]);
    expect(await snapshot([...un.untouchable, ...un.manifests])).toEqual(before);
    await expect(fsp.stat(fx.pi.bashLog)).resolves.toBeTruthy();
  });
});
