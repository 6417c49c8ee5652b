// A pi session's `<id>-blobs/` folder whose session file is gone (deleted, or
// something other than a file in its place) still holds blobs on disk: it is
// listed as a session of its own, searchable and cleanable; with its session
// file there, its blobs stay that session's only.
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';

let dir: string;
let catalog: Catalog | undefined;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-pi-orphan-'));
});
afterEach(async () => {
  await catalog?.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('a pi blobs folder without its session file', () => {
  it("is listed with a note and can be cleaned; a FIFO in the session file's place counts as gone", async () => {
    const agentDir = path.join(dir, 'pi-agent');
    const sessions = path.join(agentDir, 'sessions', '--home-dev-acme--');
    const orphan = path.join(sessions, 'aaaa1111-blobs');
    const fifoOne = path.join(sessions, 'bbbb2222-blobs');
    const kept = path.join(sessions, 'cccc3333-blobs');
    for (const folder of [orphan, fifoOne, kept]) {
      await fsp.mkdir(folder, { recursive: true });
      await fsp.writeFile(path.join(folder, 'call_1.txt'), `output of ${path.basename(folder)}\n`);
    }
    execFileSync('mkfifo', [path.join(sessions, '2026-03-01T09-00-00-000Z_bbbb2222.jsonl')]);
    await fsp.writeFile(path.join(sessions, '2026-03-01T09-00-00-000Z_cccc3333.jsonl'), JSON.stringify({ type: 'session', id: 'cccc3333', cwd: '/home/dev/acme' }) + '\n');
    catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), PI_CODING_AGENT_DIR: agentDir, TMPDIR: path.join(dir, 'tmp') }, sources: ['pi'] });
    await catalog.scan();
    const byId = new Map(catalog.sessions().map((s) => [s.id, s]));
    expect([...byId.keys()].sort()).toEqual(['aaaa1111', 'bbbb2222', 'cccc3333']);
    for (const id of ['aaaa1111', 'bbbb2222']) {
      expect(byId.get(id)!.notes).toEqual(['session file missing']);
      expect(byId.get(id)!.blobs.map((b) => b.path)).toEqual([path.join(sessions, `${id}-blobs`, 'call_1.txt')]);
    }
    expect(byId.get('cccc3333')!.blobs.map((b) => b.path)).toEqual([path.join(kept, 'call_1.txt')]);

    const result = await catalog.executeClean(await catalog.planClean({ kind: 'session', sessionKey: byId.get('aaaa1111')!.key }));
    expect(result.deleted.map((d) => d.path)).toEqual([path.join(orphan, 'call_1.txt')]);
  });
});
