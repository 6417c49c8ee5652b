// Folders larger than a call takes arguments: a spread of ~130,000 values
// into one call (push(...list), Math.max(...list)) throws a RangeError, which
// cost the whole session. One Claude Code session of 140,000 blobs is listed,
// planned for cleaning by the policy, and the list's index is read back.
import { mkdirSync, promises as fsp, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { planPolicyClean } from '../../../src/catalog/clean/cleanupPolicy';

const BLOBS = 140_000;
let dir: string;
let folder: string;

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'huge-folders-'));
  const id = '00000000-0000-4000-8000-000000000001';
  const project = path.join(dir, 'projects', '-home-dev-p');
  folder = path.join(project, id, 'tool-results');
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(project, `${id}.jsonl`), '');
  for (let i = 0; i < BLOBS; i++) writeFileSync(path.join(folder, `toolu_${i}.txt`), '');
}, 120_000);
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
}, 120_000);

describe('a session of 140,000 blobs', () => {
  it('is listed whole, streamed and from its index, and the cleanup policy plans over it', async () => {
    const cacheDir = path.join(dir, 'cache');
    for (const pass of ['cold', 'warm']) {
      const catalog = new Catalog({ roots: [path.join(dir, 'projects')], useDefaultRoots: false, cacheDir });
      const listing = await catalog.scanSessions();
      const counts: number[] = [];
      await listing.forEach((s) => counts.push(s.blobs.length));
      await listing.close();
      expect(counts, pass).toEqual([BLOBS]);
      expect(catalog.problems(), pass).toEqual([]);
      await catalog.dispose();
    }
    const catalog = new Catalog({ roots: [path.join(dir, 'projects')], useDefaultRoots: false, cacheDir });
    await catalog.scan();
    expect(catalog.sessions()[0]!.blobs).toHaveLength(BLOBS);
    // Every blob is older than a day from "now": all are planned (none is in a session changed within the hour).
    const plan = await planPolicyClean(catalog, { maxAgeDays: 1, pinned: [] }, Date.now() + 3 * 86_400_000);
    expect(plan.items).toHaveLength(BLOBS);
    expect(plan.items.every((i) => path.dirname(i.path) === folder)).toBe(true);
    await catalog.dispose();
  }, 120_000);
});
