// Looking a blob up by key costs the same however many blobs its session
// holds: counted through the session's blob array, not timed.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { MANIFEST_NAME } from '../../../src/spill/manifest';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fsp.rm(d, { recursive: true, force: true });
});

it('blob(), preview() and countLines() never walk the session blob list', async () => {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-lookup-'));
  dirs.push(dir);
  const folder = path.join(dir, 'session-0123456789ab');
  await fsp.mkdir(folder);
  const n = 3000;
  const records: string[] = [];
  for (let i = 0; i < n; i++) {
    const file = `blob-${i}.txt`;
    await fsp.writeFile(path.join(folder, file), `line of blob ${i}\n`);
    records.push(JSON.stringify({ v: 1, file, sessionId: 's', tool: 'Bash', toolCallId: `call-${i}`, args: '', bytes: 10, createdAt: '2026-01-01T00:00:00.000Z' }));
  }
  await fsp.writeFile(path.join(folder, MANIFEST_NAME), records.join('\n') + '\n');
  const catalog = new Catalog({ roots: [dir], useDefaultRoots: false });
  await catalog.scan();
  const session = catalog.sessions()[0]!;
  expect(session.blobs).toHaveLength(n);
  let reads = 0;
  // Every element read through the session's array is counted.
  session.blobs = new Proxy(session.blobs, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  const paths = Array.from({ length: n }, (_, i) => path.join(folder, `blob-${i}.txt`));
  for (const p of paths) expect(catalog.blob(p)?.path).toBe(p);
  for (const p of paths.slice(0, 200)) await catalog.preview(p);
  for (const p of paths.slice(0, 200)) await catalog.countLines(p);
  expect(reads).toBe(0);
  await catalog.dispose();
});
