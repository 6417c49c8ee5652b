// Deletion never leaves the known roots, never goes through a symlink, and
// the manifest and catalog follow.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { refusal } from '../../../src/catalog/clean/clean';
import { buildFixtureHome, type FixtureHome } from '../../fixtures/build-home';

let dir: string;
let fx: FixtureHome;
let catalog: Catalog;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-clean-'));
  fx = await buildFixtureHome(dir, { realClaude: false });
  catalog = new Catalog({ env: fx.env, roots: fx.userRoots });
  await catalog.scan();
});
afterEach(async () => {
  await catalog.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('clean safety', () => {
  it('refuses paths outside the roots, symlinks, and files reached through a symlinked folder', async () => {
    const roots = catalog.knownRoots().map((r) => r.path);
    expect(await refusal(fx.claude.outsideTarget, roots)).toBe('outside the known roots');
    expect(await refusal(fx.claude.symlink, roots)).toBe('is a symlink');
    const linkedDir = path.join(fx.claude.sessionDir, 'linked');
    await fsp.symlink(path.join(fx.home, 'outside'), linkedDir);
    expect(await refusal(path.join(linkedDir, 'secret.txt'), roots)).toBe('reached through a symlink');
    expect(await refusal(fx.claude.blobs.grep, roots)).toBeUndefined();

    const plan = await catalog.planClean({ kind: 'blobs', paths: [fx.claude.outsideTarget, fx.claude.symlink, fx.claude.blobs.grep] });
    expect(plan.items.map((i) => i.path)).toEqual([fx.claude.blobs.grep]);
    expect(plan.refused.map((r) => r.path)).toEqual([fx.claude.outsideTarget, fx.claude.symlink]);
    await catalog.executeClean(plan);
    expect(await fsp.readFile(fx.claude.outsideTarget, 'utf8')).toBe('do not touch\n');
    expect(catalog.blob(fx.claude.blobs.grep)).toBeUndefined();
  });

  it('re-checks at execution: a blob swapped for a symlink after planning is not deleted', async () => {
    const plan = await catalog.planClean({ kind: 'blobs', paths: [fx.dsh.blob] });
    await fsp.rm(fx.dsh.blob);
    await fsp.symlink(fx.claude.outsideTarget, fx.dsh.blob);
    const result = await catalog.executeClean(plan);
    expect(result.failed).toEqual([{ path: fx.dsh.blob, reason: 'is a symlink' }]);
    expect(await fsp.readFile(fx.claude.outsideTarget, 'utf8')).toBe('do not touch\n');
  });

  it('drops the manifest record of a deleted Claude Code file recorded as ../tool-results/<file>, keeping other lines', async () => {
    const manifest = path.join(fx.claude.sessionDir, 'spillway', 'spillway.jsonl');
    const before = await fsp.readFile(manifest, 'utf8');
    const trashed: string[] = [];
    const plan = await catalog.planClean({ kind: 'blobs', paths: [fx.claude.blobs.hookReplaced] });
    const result = await catalog.executeClean(plan, { trash: async (p) => { trashed.push(p); await fsp.rm(p); } });
    expect(trashed).toEqual([fx.claude.blobs.hookReplaced]);
    expect(result.manifestsRewritten).toEqual([manifest]);
    const after = await fsp.readFile(manifest, 'utf8');
    expect(after).not.toContain('bq8w3e5r1.txt');
    expect(after).toBe(before.split('\n').slice(1).join('\n')); // only the torn tail is left, untouched
    expect((await fsp.stat(manifest)).mode & 0o777).toBe(0o600);
  });

  it('retention: oldest first until the total is under the size, and the catalog follows', async () => {
    const all = catalog.sessions().flatMap((s) => s.blobs);
    const total = all.reduce((s, b) => s + b.bytes, 0);
    const plan = await catalog.planClean({ kind: 'retention', maxTotalBytes: total - 1 });
    const oldest = [...all].sort((a, b) => a.mtimeMs - b.mtimeMs || a.path.localeCompare(b.path))[0]!;
    expect(plan.items.map((i) => i.path)).toEqual([oldest.path]);
    const old = await catalog.planClean({ kind: 'retention', olderThanMs: 1000, now: Date.now() + 10 * 86_400_000 });
    expect(old.items).toHaveLength(all.length);
    expect(old.bytes).toBe(total);
    const session = catalog.findSessions(fx.pi.sessionId)[0]!;
    const result = await catalog.executeClean(await catalog.planClean({ kind: 'session', sessionKey: session.key }));
    expect(result.deleted.map((d) => d.path).sort()).toEqual([fx.pi.bashLog, fx.pi.condenseBlob].sort());
    expect(catalog.session(session.key)).toBeUndefined();
  });

  it('a retention clean over many folders: one swapped for a symlink after planning keeps every file in it, the rest go, in plan order', async () => {
    const { folders, many } = await claudeSessions(3, 4);
    try {
      const plan = await many.planClean({ kind: 'retention', olderThanMs: 1000, now: Date.now() + 86_400_000 });
      expect(plan.items).toHaveLength(12);
      // The middle session's folder (above tool-results/) is moved outside and a symlink put in its place.
      const outside = path.join(dir, 'outside-session');
      await fsp.rename(path.dirname(folders[1]!), outside);
      await fsp.symlink(outside, path.dirname(folders[1]!));
      const result = await many.executeClean(plan);
      const inMiddle = (p: string): boolean => path.dirname(p) === folders[1];
      expect(result.failed.map((f) => f.path)).toEqual(plan.items.map((i) => i.path).filter(inMiddle));
      expect(new Set(result.failed.map((f) => f.reason))).toEqual(new Set(['reached through a symlink']));
      expect(result.deleted.map((d) => d.path)).toEqual(plan.items.map((i) => i.path).filter((p) => !inMiddle(p)));
      expect((await fsp.readdir(path.join(outside, 'tool-results'))).sort()).toEqual(['toolu_10.txt', 'toolu_11.txt', 'toolu_12.txt', 'toolu_13.txt']);
      for (const f of [folders[0]!, folders[2]!]) await expect(fsp.readdir(f)).rejects.toThrow(); // emptied, removed
    } finally {
      await many.dispose();
    }
  });

  it('says why a planned file stays when its folder became a file', async () => {
    const { folders, many } = await claudeSessions(1, 2);
    try {
      const plan = await many.planClean({ kind: 'retention', olderThanMs: 1000, now: Date.now() + 86_400_000 });
      await fsp.rm(folders[0]!, { recursive: true });
      await fsp.writeFile(folders[0]!, 'not a folder\n');
      const result = await many.executeClean(plan);
      expect(result.failed.map((f) => f.reason)).toEqual(['its folder is not a folder', 'its folder is not a folder']);
      expect(await fsp.readFile(folders[0]!, 'utf8')).toBe('not a folder\n');
    } finally {
      await many.dispose();
    }
  });
});

/** `sessions` Claude Code sessions of `perSession` blobs each (each folder holds several), scanned by a catalog of their own. */
async function claudeSessions(sessions: number, perSession: number): Promise<{ folders: string[]; many: Catalog }> {
  const projects = path.join(dir, 'claude', 'projects', '-home-dev-p');
  const folders: string[] = [];
  for (let s = 0; s < sessions; s++) {
    const id = `0000000${s}-0000-4000-8000-000000000000`;
    const folder = path.join(projects, id, 'tool-results');
    await fsp.mkdir(folder, { recursive: true });
    await fsp.writeFile(path.join(projects, `${id}.jsonl`), '');
    for (let b = 0; b < perSession; b++) await fsp.writeFile(path.join(folder, `toolu_${s}${b}.txt`), `blob ${s} ${b}\n`);
    folders.push(folder);
  }
  const many = new Catalog({ roots: [path.join(dir, 'claude', 'projects')], useDefaultRoots: false });
  await many.scan();
  return { folders, many };
}
