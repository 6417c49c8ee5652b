// A blob folder that is a symlink (Claude Code's tool-results/, a pi
// <id>-blobs/ folder) is never listed through: the files it leads to are not
// the session's blobs.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { listFiles } from '../../../src/catalog/sources/common';

let dir: string;
let catalog: Catalog | undefined;

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-symlinked-folder-'));
});
afterEach(async () => {
  await catalog?.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('symlinked blob folders', () => {
  it('listFiles does not list through a symlinked folder', async () => {
    const outside = path.join(dir, 'outside');
    await fsp.mkdir(outside);
    await fsp.writeFile(path.join(outside, 'secret.txt'), 'do not list\n');
    await fsp.symlink(outside, path.join(dir, 'linked'));
    expect(await listFiles(outside)).toHaveLength(1);
    // Only the symlink itself, as one entry to count as skipped: nothing behind it.
    expect(await listFiles(path.join(dir, 'linked'))).toEqual([{ path: path.join(dir, 'linked'), name: 'linked', symlink: true }]);
  });

  it('a Claude Code session whose tool-results/ is a symlink lists none of the files behind it', async () => {
    const config = path.join(dir, 'claude');
    const sessionId = '0b9a8c7d-1111-4222-8333-444455556666';
    const sessionDir = path.join(config, 'projects', '-work', sessionId);
    const outside = path.join(dir, 'outside');
    await fsp.mkdir(path.join(sessionDir, 'subagents'), { recursive: true });
    await fsp.mkdir(path.join(sessionDir, 'spillway')); // a real sub-folder, so the session folder is claimed
    await fsp.mkdir(outside);
    await fsp.writeFile(path.join(outside, 'toolu_01SecretAAAAAAAAAAAAAAAAAA.txt'), 'do not list\n');
    await fsp.symlink(outside, path.join(sessionDir, 'tool-results'));
    await fsp.writeFile(path.join(sessionDir, 'subagents', 'agent-a1.jsonl'), '');
    await fsp.writeFile(path.join(path.dirname(sessionDir), `${sessionId}.jsonl`), JSON.stringify({ type: 'user', sessionId, message: { content: 'hi' } }) + '\n');
    catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), CLAUDE_CONFIG_DIR: config, TMPDIR: path.join(dir, 'tmp') }, sources: ['claude-code'] });
    await catalog.scan();
    const listed = catalog.sessions().flatMap((s) => s.blobs.map((b) => b.path));
    expect(listed).toEqual([]);
  });

  it('a Claude Code session whose only tool-results/ is a symlink is reported, not silently left out', async () => {
    const config = path.join(dir, 'claude');
    const sessionId = '0b9a8c7d-1111-4222-8333-444455556688';
    const sessionDir = path.join(config, 'projects', '-work', sessionId);
    const outside = path.join(dir, 'outside');
    await fsp.mkdir(sessionDir, { recursive: true });
    await fsp.mkdir(outside);
    await fsp.writeFile(path.join(outside, 'toolu_01SecretAAAAAAAAAAAAAAAAAA.txt'), 'do not list\n');
    await fsp.symlink(outside, path.join(sessionDir, 'tool-results'));
    await fsp.writeFile(path.join(path.dirname(sessionDir), `${sessionId}.jsonl`), JSON.stringify({ type: 'user', sessionId, message: { content: 'hi' } }) + '\n');
    const index = path.join(dir, 'cache');
    for (let run = 0; run < 2; run++) {
      // Twice: a run with the index written by the first must say so again (the session is stored unsettled).
      catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), CLAUDE_CONFIG_DIR: config, TMPDIR: path.join(dir, 'tmp'), XDG_CACHE_HOME: index }, sources: ['claude-code'] });
      const listing = await catalog.scanSessions();
      expect(listing.blobs).toBe(0);
      await listing.close();
      expect(catalog.problems()).toEqual([`cannot describe ${sessionDir}: ${path.join(sessionDir, 'tool-results')} is a symlink, never followed`]);
      await catalog.dispose();
      catalog = undefined;
    }
  });

  it("a pi session whose only <id>-blobs/ is a symlink is reported, not silently left out", async () => {
    const id = '0195b7c2-0000-7000-8000-00000000b10b';
    const sessions = path.join(dir, 'sessions');
    const folder = path.join(sessions, '--work--');
    const outside = path.join(dir, 'outside');
    await fsp.mkdir(folder, { recursive: true });
    await fsp.mkdir(outside);
    await fsp.writeFile(path.join(outside, 'call_1.txt'), 'do not list\n');
    await fsp.symlink(outside, path.join(folder, `${id}-blobs`));
    const lines = [
      { type: 'session', version: 3, id, timestamp: '2026-03-01T09:00:00.000Z', cwd: '/work' },
      { type: 'message', id: 'a0', parentId: null, timestamp: '2026-03-01T09:00:01.000Z', message: { role: 'assistant', content: [{ type: 'toolCall', id: 'call_1', name: 'bash', arguments: { command: 'make' } }] } },
    ];
    await fsp.writeFile(path.join(folder, `2026-03-01T09-00-00-000Z_${id}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    catalog = new Catalog({ roots: [sessions], useDefaultRoots: false });
    await catalog.scan();
    expect(catalog.sessions()).toEqual([]);
    expect(catalog.problems()).toEqual([`cannot describe ${path.join(folder, `2026-03-01T09-00-00-000Z_${id}.jsonl`)}: ${path.join(folder, `${id}-blobs`)} is a symlink, never followed`]);
  });

  it('a Claude Code session whose transcript is a symlink keeps its blobs, and counts the transcript as skipped', async () => {
    const config = path.join(dir, 'claude');
    const sessionId = '0b9a8c7d-1111-4222-8333-444455556677';
    const project = path.join(config, 'projects', '-work');
    await fsp.mkdir(path.join(project, sessionId, 'tool-results'), { recursive: true });
    await fsp.writeFile(path.join(project, sessionId, 'tool-results', 'toolu_01A.txt'), 'output\n');
    const elsewhere = path.join(dir, 'elsewhere.jsonl');
    await fsp.writeFile(elsewhere, JSON.stringify({ type: 'user', sessionId, cwd: '/secret/cwd', message: { content: 'hi' } }) + '\n');
    await fsp.symlink(elsewhere, path.join(project, `${sessionId}.jsonl`));
    catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), CLAUDE_CONFIG_DIR: config, TMPDIR: path.join(dir, 'tmp') }, sources: ['claude-code'] });
    await catalog.scan();
    const [session] = catalog.sessions();
    expect(session!.blobs.map((b) => b.name)).toEqual(['toolu_01A.txt']);
    expect(session!.skipped).toBe(1);
    expect(session!.cwd).toBeUndefined(); // never read through the link
    expect(session!.notes).not.toContain('transcript missing');
  });
});
