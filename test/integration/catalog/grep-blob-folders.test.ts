// grep hands ripgrep a folder whole when every regular file in it is one of
// its session's blobs: for every layout with a folder of its own (pi's
// `<id>-blobs/`, Gemini's session folder, opencode's `tool-output/`, ...),
// not only Claude Code's and Spillway's. File by file, 40,000 pi blobs took
// ripgrep 6 s (each opened and checked here, then handed over as a descriptor)
// against 0.5 s for rg alone. A folder that also holds something else stays
// file by file. The TMPDIR folders goose and Cline write to go whole with a
// glob of their names: ripgrep reads only the files named like theirs.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { findRipgrep, type GrepTargets } from '../../../src/catalog/grep/grep';
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
  it('are every layout folder that holds nothing but its blobs; TMPDIR folders only for their names; pi bash logs file by file', async () => {
    const t = await targets();
    const folders = (t.folders ?? []).map((f) => f.path);
    for (const folder of [path.dirname(fx.claude.blobs.grep), fx.pi.blobsDir, fx.gemini.dir, fx.opencode.dir, fx.dsh.dir, fx.orgrt.dir, fx.spillway.dir, ...fx.lowerPriority!.roo.map((r) => r.dir), ...fx.lowerPriority!.openhands.map((o) => o.dir)]) {
      const found = (t.folders ?? []).find((f) => f.path === folder);
      expect(found, folder).toBeDefined();
      expect(found!.names, folder).toBeUndefined(); // read whole
    }
    const { goose, cline } = fx.lowerPriority!;
    expect((t.folders ?? []).find((f) => f.path === goose.dir)).toMatchObject({ names: 'mcp_response_*.txt', files: goose.blobs.length });
    expect((t.folders ?? []).find((f) => f.path === cline.dir)).toMatchObject({ names: 'large-output-*.log', files: cline.blobs.length });
    expect(t.paths).toEqual([fx.pi.bashLog]);
    // A folder's file count is its blobs'.
    expect((t.folders ?? []).find((f) => f.path === fx.gemini.dir)).toMatchObject({ files: 1 });
    expect(folders).not.toContain(path.dirname(fx.pi.bashLog));
  });

  it("reads a TMPDIR folder only for its agent's names: another program's file there is never searched, a hard link so named keeps it file by file", async () => {
    const rg = findRipgrep();
    expect(rg, 'ripgrep (npm test installs it)').toBeDefined();
    // rg through a script that records each run's arguments, one per line, runs apart.
    const log = path.join(dir, 'rg-args.log');
    const wrapper = path.join(dir, 'rg-logged');
    await fsp.writeFile(wrapper, `#!/bin/sh\nprintf '%s\\n' "$@" ---- >> '${log}'\nexec '${rg}' "$@"\n`, { mode: 0o755 });
    const { goose } = fx.lowerPriority!;
    const needle = 'NEEDLE-in-tmp';
    await fsp.appendFile(goose.blobs[0]!, `${needle} from goose\n`);
    await fsp.writeFile(path.join(goose.dir, 'notes.txt'), `${needle} another program's\n`);
    const search = async (): Promise<{ paths: string[]; runs: string[][] }> => {
      await fsp.rm(log, { force: true });
      const catalog = new Catalog({ env: fx.env, roots: fx.userRoots, cacheDir: path.join(dir, 'cache') });
      const paths: string[] = [];
      try {
        await catalog.scanAndGrep({ pattern: needle, rgPath: wrapper, engine: 'rg' }, (m) => void paths.push(m.path));
      } finally {
        await catalog.dispose();
      }
      const runs = (await fsp.readFile(log, 'utf8')).split('----\n').filter(Boolean).map((run) => run.split('\n').filter(Boolean));
      return { paths, runs };
    };
    const first = await search();
    expect(first.paths).toEqual([goose.blobs[0]]);
    // The run given goose's folder (a held descriptor) was given its glob, and no other run was.
    const globbed = first.runs.filter((args) => args.includes('mcp_response_*.txt'));
    expect(globbed).toHaveLength(1);
    expect(globbed[0]![globbed[0]!.indexOf('mcp_response_*.txt') - 1]).toBe('--glob');
    expect(first.runs.every((args) => args.filter((a) => a === '--glob').length === (args.includes('mcp_response_*.txt') || args.includes('large-output-*.log') ? 3 : 2))).toBe(true);
    // A hard link named like goose's: the folder goes file by file, and the link is never searched.
    await fsp.link(path.join(goose.dir, 'notes.txt'), path.join(goose.dir, 'mcp_response_20250101_000000.txt'));
    const t = await targets();
    expect((t.folders ?? []).map((f) => f.path)).not.toContain(goose.dir);
    expect(t.paths).toEqual(expect.arrayContaining(goose.blobs));
    const second = await search();
    expect(second.paths).toEqual([goose.blobs[0]]);
    expect(second.runs.some((args) => args.includes('mcp_response_*.txt'))).toBe(false);
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
