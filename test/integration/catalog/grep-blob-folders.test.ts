// grep hands ripgrep a folder whole when every regular file in it is one of
// its session's blobs: for every layout with a folder of its own (pi's
// `<id>-blobs/`, Gemini's session folder, opencode's `tool-output/`, ...),
// not only Claude Code's and Spillway's. File by file, 40,000 pi blobs took
// ripgrep 6 s (each opened and checked here, then handed over as a descriptor)
// against 0.5 s for rg alone. A folder that also holds something else, and the
// TMPDIR folders goose and Cline write to, stay file by file.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import type { GrepTargets } from '../../../src/catalog/grep';
import { buildFixtureHome, type FixtureHome } from '../../fixtures/build-home';

let dir: string;
let fx: FixtureHome;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-grep-folders-'));
  fx = await buildFixtureHome(dir, { realClaude: false, lowerPriority: true });
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** What a one-off grep would hand ripgrep, from a scan through the index (as the CLI runs it). */
async function targets(): Promise<GrepTargets> {
  const catalog = new Catalog({ env: fx.env, roots: fx.userRoots, cacheDir: path.join(dir, 'cache') });
  const listing = await catalog.scanSessions();
  try {
    return listing.grepTargets();
  } finally {
    await listing.close();
    await catalog.dispose();
  }
}

describe('blob folders', () => {
  it('are every layout folder that holds nothing but its blobs; TMPDIR folders and pi bash logs stay file by file', async () => {
    const t = await targets();
    const folders = (t.folders ?? []).map((f) => f.path);
    for (const folder of [path.dirname(fx.claude.blobs.grep), fx.pi.blobsDir, fx.gemini.dir, fx.opencode.dir, fx.dsh.dir, fx.orgrt.dir, fx.spillway.dir, ...fx.lowerPriority!.roo.map((r) => r.dir), ...fx.lowerPriority!.openhands.map((o) => o.dir)]) {
      expect(folders, folder).toContain(folder);
    }
    expect(folders).not.toContain(fx.lowerPriority!.goose.dir);
    expect(folders).not.toContain(fx.lowerPriority!.cline.dir);
    for (const blob of [...fx.lowerPriority!.goose.blobs, ...fx.lowerPriority!.cline.blobs, fx.pi.bashLog]) expect(t.paths, blob).toContain(blob);
    // A folder's file count is its blobs'.
    expect((t.folders ?? []).find((f) => f.path === fx.gemini.dir)).toMatchObject({ files: 1 });
  });

  it('leaves a folder file by file once it holds a file that is not one of its blobs (a hard link, a name the source leaves out)', async () => {
    await fsp.link(fx.gemini.blob, path.join(fx.pi.blobsDir, 'linked.txt')); // a second name: never a blob
    await fsp.writeFile(path.join(fx.opencode.dir, 'not-a-tool-output.json'), '{}'); // opencode lists tool_* only
    await fsp.link(fx.dsh.blob, path.join(path.dirname(fx.claude.blobs.grep), 'toolu_01Linked.txt')); // Claude Code's tool-results too
    const t = await targets();
    const folders = (t.folders ?? []).map((f) => f.path);
    expect(folders).not.toContain(fx.pi.blobsDir);
    expect(folders).not.toContain(fx.opencode.dir);
    expect(folders).not.toContain(fx.gemini.dir); // the blob's other name makes it no blob either
    expect(folders).not.toContain(path.dirname(fx.claude.blobs.grep));
    expect(t.paths).toContain(fx.claude.blobs.grep);
    expect(t.paths).toContain(fx.pi.condenseBlob);
    expect(t.paths).toContain(fx.opencode.blob);
    expect(t.paths).not.toContain(path.join(fx.opencode.dir, 'not-a-tool-output.json'));
    expect(folders).toContain(fx.orgrt.dir);
  });
});
