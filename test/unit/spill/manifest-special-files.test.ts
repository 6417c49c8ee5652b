// Reading a manifest never blocks on a FIFO nor follows a symlink planted in
// its place: the reader fails clearly and the catalog counts it as skipped.
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { describeManifestFolder } from '../../../src/catalog/sources/common';
import { MANIFEST_NAME, readManifest, readManifestFrom } from '../../../src/spill/manifest';

let dir: string;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'manifest-special-'));
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const record = JSON.stringify({ v: 1, file: 'a.txt', tool: 'Bash', toolCallId: 't1', bytes: 1, lines: 1, sha256: '', createdAt: '', sessionId: 's' }) + '\n';

describe('readManifest on special files', () => {
  it('rejects a FIFO in place of the manifest instead of waiting for a writer; the folder is still listed', async () => {
    execFileSync('mkfifo', [path.join(dir, MANIFEST_NAME)]);
    await fsp.writeFile(path.join(dir, 'a.txt'), 'x');
    await expect(readManifest(dir)).rejects.toThrow(/not a regular file/);
    const described = await describeManifestFolder(dir);
    expect(described.blobs.map((b) => b.name)).toEqual(['a.txt']);
    expect(described.skipped).toBe(1);
  });

  it("counts it as skipped in Claude Code's tool-results/ too (one rule for every layout)", async () => {
    const sessionId = '0b9a8c7d-2222-4333-8444-555566667777';
    const results = path.join(dir, 'claude', 'projects', '-work', sessionId, 'tool-results');
    await fsp.mkdir(results, { recursive: true });
    execFileSync('mkfifo', [path.join(results, MANIFEST_NAME)]);
    await fsp.writeFile(path.join(results, 'toolu_01PlainAAAAAAAAAAAAAAAAAAA.txt'), 'x');
    await fsp.writeFile(path.join(dir, 'claude', 'projects', '-work', `${sessionId}.jsonl`), JSON.stringify({ type: 'user', sessionId, message: { content: 'hi' } }) + '\n');
    const catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), CLAUDE_CONFIG_DIR: path.join(dir, 'claude'), TMPDIR: path.join(dir, 'tmp') }, sources: ['claude-code'] });
    try {
      await catalog.scan();
      const [session] = catalog.sessions();
      expect(session?.blobs.map((b) => b.name)).toEqual(['toolu_01PlainAAAAAAAAAAAAAAAAAAA.txt']);
      expect(session?.skipped).toBe(1);
    } finally {
      await catalog.dispose();
    }
  });

  it('does not follow a symlink in place of the manifest', async () => {
    const elsewhere = path.join(dir, 'elsewhere.jsonl');
    await fsp.writeFile(elsewhere, record);
    const folder = path.join(dir, 'session');
    await fsp.mkdir(folder);
    await fsp.symlink(elsewhere, path.join(folder, MANIFEST_NAME));
    await expect(readManifest(folder)).rejects.toThrow();
  });

  it('still reads a regular manifest and treats a missing one as empty', async () => {
    await fsp.writeFile(path.join(dir, MANIFEST_NAME), record);
    expect((await readManifest(dir)).records.map((r) => r.file)).toEqual(['a.txt']);
    expect(await readManifest(path.join(dir, 'none'))).toEqual({ records: [], skipped: 0 });
  });
});

describe('readManifestFrom on a FIFO', () => {
  it('rejects at once instead of waiting for a writer (the hook looks up dedup records through it)', async () => {
    execFileSync('mkfifo', [path.join(dir, MANIFEST_NAME)]);
    await expect(readManifestFrom(dir, 0)).rejects.toThrow(/not a regular file/);
  });
});
