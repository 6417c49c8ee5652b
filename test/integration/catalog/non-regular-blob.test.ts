// A blob replaced by a FIFO or a symlink after the scan: preview, slice, line
// count and grep (both engines) refuse it with a clear error instead of
// blocking on the FIFO or reading what the symlink leads to; other blobs are
// still read and searched.
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { findRipgrep, grep } from '../../../src/catalog/grep/grep';
import { readHead } from '../../../src/catalog/read/head';
import { NotRegularFileError, openRegularFile } from '../../../src/spill/regular-file';
import { countLines, readSlice } from '../../../src/catalog/read/slice';
import { ensureBuilt, runCli } from './helpers';

let dir: string;
let catalog: Catalog | undefined;
let fifo: string;
let link: string;
let plain: string;
const SECRET = 'SECRET needle behind the link\n';

beforeAll(() => ensureBuilt());

beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-non-regular-'));
  const sessionId = '0b9a8c7d-2222-4333-8444-555566667777';
  const config = path.join(dir, 'claude');
  const sessionDir = path.join(config, 'projects', '-work', sessionId);
  const results = path.join(sessionDir, 'tool-results');
  await fsp.mkdir(results, { recursive: true });
  fifo = path.join(results, 'toolu_01FifoAAAAAAAAAAAAAAAAAAAA.txt');
  link = path.join(results, 'toolu_01LinkAAAAAAAAAAAAAAAAAAAA.txt');
  plain = path.join(results, 'toolu_01PlainAAAAAAAAAAAAAAAAAAA.txt');
  for (const file of [fifo, link, plain]) await fsp.writeFile(file, 'first needle\nsecond\n');
  await fsp.writeFile(path.join(path.dirname(sessionDir), `${sessionId}.jsonl`), JSON.stringify({ type: 'user', sessionId, message: { content: 'hi' } }) + '\n');
  catalog = new Catalog({ env: { HOME: path.join(dir, 'home'), CLAUDE_CONFIG_DIR: config, TMPDIR: path.join(dir, 'tmp') }, sources: ['claude-code'] });
  await catalog.scan();
  // Swapped after the scan: a FIFO nobody writes to, and a symlink to a file outside.
  const outside = path.join(dir, 'outside.txt');
  await fsp.writeFile(outside, SECRET);
  await fsp.rm(fifo);
  execFileSync('mkfifo', [fifo]);
  await fsp.rm(link);
  await fsp.symlink(outside, link);
});
afterEach(async () => {
  await catalog?.dispose();
  catalog = undefined;
  await fsp.rm(dir, { recursive: true, force: true });
});

describe('blobs that are no longer regular files', () => {
  it('the scan listed all three blobs (the swap happened after it)', () => {
    const listed = catalog!.sessions().flatMap((s) => s.blobs.map((b) => b.path)).sort();
    expect(listed).toEqual([fifo, link, plain].sort());
  });

  it('openRegularFile refuses a FIFO and a symlink with a clear error and opens a regular file', async () => {
    await expect(openRegularFile(fifo)).rejects.toThrow(/not a regular file \(FIFO\)/);
    await expect(openRegularFile(link)).rejects.toThrow(/not a regular file \(symlink\)/);
    await expect(openRegularFile(dir)).rejects.toBeInstanceOf(NotRegularFileError);
    const handle = await openRegularFile(plain);
    try {
      // O_NONBLOCK does not change reads of a regular file.
      expect(await handle.readFile('utf8')).toBe('first needle\nsecond\n');
    } finally {
      await handle.close();
    }
  });

  it('preview, slice and line count refuse them; the regular blob is still read', async () => {
    for (const [file, kind] of [[fifo, 'FIFO'], [link, 'symlink']] as const) {
      const refused = new RegExp(`not a regular file \\(${kind}\\)`);
      await expect(readHead(file)).rejects.toThrow(refused);
      await expect(catalog!.preview(file)).rejects.toThrow(refused);
      await expect(readSlice(file, 1, 2)).rejects.toThrow(refused);
      await expect(catalog!.readSlice(file, 1, 2)).rejects.toThrow(refused);
      await expect(countLines(file)).rejects.toThrow(refused);
      await expect(catalog!.countLines(file)).rejects.toThrow(refused);
    }
    expect((await catalog!.preview(plain)).preview).toBe('first needle\nsecond');
    expect((await catalog!.readSlice(plain, 2, 2)).text).toBe('second');
    expect(await catalog!.countLines(plain)).toBe(2);
  });

  it('a symlink put in place of a counted file does not reuse the cached count', async () => {
    const counted = path.join(dir, 'counted.txt');
    await fsp.writeFile(counted, 'a\nb\nc\n');
    expect(await countLines(counted)).toBe(3);
    const target = path.join(dir, 'counted-target.txt');
    await fsp.rename(counted, target);
    await fsp.symlink(target, counted);
    await expect(countLines(counted)).rejects.toThrow(/symlink/);
  });

  for (const engine of ['node', 'rg'] as const) {
    it(`${engine}: grep over the catalog skips both and finds the regular blob`, async () => {
      if (engine === 'rg') expect(findRipgrep()).toBeDefined();
      const matches: string[] = [];
      const summary = await catalog!.grep({ pattern: 'needle', engine }, (m) => matches.push(`${m.path}:${m.line}:${m.text}`));
      expect(summary.engine).toBe(engine);
      expect(matches).toEqual([`${plain}:1:first needle`]);
    });

    it(`${engine}: grep given the paths reports each non-regular file and goes on`, async () => {
      const matches: string[] = [];
      const summary = await grep({ pattern: 'needle', paths: [fifo, link, plain], engine }, (m) => matches.push(`${m.path}:${m.line}:${m.text}`));
      expect(matches).toEqual([`${plain}:1:first needle`]);
      expect(matches.join('\n')).not.toContain('SECRET');
      const errors = new Map(summary.errors.map((e) => [e.path, e.message]));
      expect(errors.get(fifo)).toMatch(/not a regular file \(FIFO\)/);
      expect(errors.get(link)).toMatch(/not a regular file \(symlink\)/);
      expect(errors.has(plain)).toBe(false);
    });
  }

  it('spillway show refuses a FIFO and a symlink, with and without --lines', async () => {
    for (const file of [fifo, link]) {
      for (const extra of [[], ['--lines', '1:2']]) {
        const result = await runCli(['show', file, ...extra], cliEnv());
        expect(result.code).not.toBe(0);
        expect(result.stderr).toMatch(/not a regular file/);
        expect(result.stdout).not.toContain('SECRET');
      }
    }
    const ok = await runCli(['show', plain], cliEnv());
    expect(ok.stdout).toBe('first needle\nsecond\n');
  });
});

function cliEnv(): NodeJS.ProcessEnv {
  return { ...process.env, HOME: path.join(dir, 'home'), CLAUDE_CONFIG_DIR: path.join(dir, 'claude'), TMPDIR: path.join(dir, 'tmp') };
}
