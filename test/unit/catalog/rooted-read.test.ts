import { closeSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FOLDERS_HELD_OPEN } from '../../../src/spill/anchored-dir';
import { RootedReads } from '../../../src/catalog/read/rooted-read';

describe.runIf(FOLDERS_HELD_OPEN)('RootedReads: a folder or file below a root, held where the root really lies', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = realpathSync(mkdtempSync(path.join(tmpdir(), 'rooted-')));
    mkdirSync(path.join(tmp, 'real', 'p', 's', 'tool-results'), { recursive: true });
    writeFileSync(path.join(tmp, 'real', 'p', 's', 'tool-results', 'b.txt'), 'x');
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  const holds = (reads: RootedReads, dir: string): boolean => {
    try {
      reads.holdFolder(dir).close();
      return true;
    } catch {
      return false;
    }
  };

  it('holds a folder and opens a file below a root that is its own real path, the root itself too', () => {
    const reads = new RootedReads([path.join(tmp, 'real')]);
    expect(holds(reads, path.join(tmp, 'real', 'p', 's', 'tool-results'))).toBe(true);
    expect(holds(reads, path.join(tmp, 'real'))).toBe(true);
    expect(holds(reads, path.join(tmp, 'real', 'p', '.', 's', '..', 's'))).toBe(true); // not normalized: resolved first
    const file = reads.openSync(path.join(tmp, 'real', 'p', 's', 'tool-results', 'b.txt'));
    expect(file.fd).toBeGreaterThan(2);
    closeSync(file.fd);
  });

  it('holds a folder below a root that is a symlink (to a folder, or to /), judged where the root leads', () => {
    symlinkSync(path.join(tmp, 'real'), path.join(tmp, 'link'));
    symlinkSync('/', path.join(tmp, 'top'));
    const viaLink = new RootedReads([path.join(tmp, 'link')]);
    expect(holds(viaLink, path.join(tmp, 'link', 'p', 's', 'tool-results'))).toBe(true);
    expect(holds(viaLink, path.join(tmp, 'link'))).toBe(true);
    const viaTop = new RootedReads([path.join(tmp, 'top')]);
    expect(holds(viaTop, path.join(tmp, 'top', tmp.slice(1), 'real', 'p'))).toBe(true);
    expect(holds(viaTop, path.join(tmp, 'top'))).toBe(true);
    expect(holds(new RootedReads(['/']), path.join(tmp, 'real', 'p'))).toBe(true);
  });

  it('refuses a folder below its root reached through a symlinked folder, whatever the root', () => {
    symlinkSync(path.join(tmp, 'real', 'p'), path.join(tmp, 'real', 'q'));
    symlinkSync(path.join(tmp, 'real'), path.join(tmp, 'link'));
    expect(holds(new RootedReads([path.join(tmp, 'real')]), path.join(tmp, 'real', 'q', 's'))).toBe(false);
    expect(holds(new RootedReads([path.join(tmp, 'link')]), path.join(tmp, 'link', 'q', 's'))).toBe(false);
    expect(() => new RootedReads([path.join(tmp, 'real')]).openSync(path.join(tmp, 'real', 'q', 's', 'tool-results', 'b.txt'))).toThrow(/symlink/);
  });
});
