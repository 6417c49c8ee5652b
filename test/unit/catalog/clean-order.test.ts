// A retention clean deletes the oldest blobs first; blobs of the same mtime go
// in byte order of their paths, the same on every machine (localeCompare put
// 'a.txt' before 'B.txt', or not, by the locale).
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { planClean } from '../../../src/catalog/clean/clean';

let root: string;
beforeEach(async () => {
  root = await fsp.mkdtemp(path.join(os.tmpdir(), 'clean-order-'));
});
afterEach(async () => {
  await fsp.rm(root, { recursive: true, force: true });
});

it('takes tied blobs in byte order of their paths', async () => {
  const mtimeMs = Date.parse('2026-01-01T00:00:00Z');
  const blobs = [];
  for (const name of ['a.txt', 'B.txt', 'c.txt']) {
    const file = path.join(root, name);
    await fsp.writeFile(file, 'x');
    await fsp.utimes(file, mtimeMs / 1000, mtimeMs / 1000);
    blobs.push({ path: file, bytes: 1, mtimeMs, sessionKey: 's' });
  }
  const plan = await planClean({ kind: 'retention', maxTotalBytes: 1 }, [{ key: 's', updatedAt: new Date(mtimeMs).toISOString(), blobs }], [root]);
  expect(plan.items.map((i) => path.basename(i.path))).toEqual(['B.txt', 'a.txt']);
});
