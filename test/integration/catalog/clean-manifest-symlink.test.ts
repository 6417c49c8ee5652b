// The manifest rewrite after a deletion stays inside the known roots: a blob
// folder swapped for a symlink between planning and execution must not get
// the manifest it now points at rewritten.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeClean } from '../../../src/catalog/clean/clean';
import type { CleanPlan } from '../../../src/catalog/types';

let dir: string;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'clean-manifest-symlink-'));
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const record = (file: string) => JSON.stringify({ v: 1, file, tool: 'Bash', toolCallId: 't', bytes: 3, lines: 1, sha256: '', createdAt: '', sessionId: 's' }) + '\n';

describe('clean: manifest rewrite', () => {
  it('does not rewrite a manifest outside the roots reached through a session folder swapped for a symlink', async () => {
    const root = path.join(dir, 'root');
    const session = path.join(root, 'session-1');
    const outside = path.join(dir, 'outside');
    await fsp.mkdir(session, { recursive: true });
    await fsp.mkdir(outside);
    const blob = path.join(session, 'blob.txt');
    await fsp.writeFile(blob, 'abc');
    await fsp.writeFile(path.join(session, 'spillway.jsonl'), record('blob.txt'));
    const outsideManifest = path.join(outside, 'spillway.jsonl');
    const outsideText = record('blob.txt') + record('gone.txt');
    await fsp.writeFile(outsideManifest, outsideText);

    const plan: CleanPlan = {
      request: { kind: 'blobs', paths: [blob] },
      items: [{ path: blob, bytes: 3, sessionKey: 's', mtimeMs: 0 }],
      bytes: 3,
      refused: [],
    };
    // After planning, the session folder is moved away and a symlink to a folder outside takes its place.
    await fsp.rename(session, path.join(root, 'moved'));
    await fsp.symlink(outside, session);

    const result = await executeClean(plan, [root]);
    expect(result.manifestsRewritten).toEqual([]);
    expect(await fsp.readFile(outsideManifest, 'utf8')).toBe(outsideText);
    expect(await fsp.readdir(outside)).toEqual(['spillway.jsonl']);
  });
});
