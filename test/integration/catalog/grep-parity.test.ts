// ripgrep and the Node search must find the same matches: same files, line
// numbers and clipped text, on every layout, a 60 MB blob, odd lines.
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { findRipgrep, grep } from '../../../src/catalog/grep/grep';
import { countLines, indexedCheckpoints, readSlice } from '../../../src/catalog/read/slice';
import type { GrepMatch, GrepOptions, GrepProgress } from '../../../src/catalog/types';
import { buildFixtureHome, type FixtureHome } from '../../fixtures/build-home';

let dir: string;
let fx: FixtureHome;
let catalog: Catalog;
let paths: string[];

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-grep-'));
  fx = await buildFixtureHome(dir, { bigBlob: true });
  // Odd lines: CRLF, non-ASCII, a last line without newline, an empty file, invalid UTF-8.
  await fsp.writeFile(path.join(fx.dsh.dir, 'aa11bb22-odd.txt'), 'Über NEEDLE\r\nnaïve needle\n\nNEEDLE at end');
  await fsp.writeFile(path.join(fx.dsh.dir, 'aa11bb23-empty.txt'), '');
  await fsp.writeFile(path.join(fx.dsh.dir, 'aa11bb24-latin1.txt'), Buffer.from('caf\xe9 needle\nplain\n', 'latin1'));
  // A UTF-8 byte-order mark: not part of line 1 for either engine (`^NEEDLE` holds there).
  await fsp.writeFile(path.join(fx.dsh.dir, 'aa11bb29-bom.txt'), '\ufeffNEEDLE at the start\nstep 3998 ok\n');
  // A NUL byte past the first 64 KiB: both engines search the lines before ripgrep's read that holds it, none after.
  await fsp.writeFile(path.join(fx.dsh.dir, 'aa11bb28-nul.txt'), `NEEDLE before\n${'filler NEEDLE line\n'.repeat(8000)}binary \0 NEEDLE\nNEEDLE after\n`);
  // Invalid UTF-8 (each byte decodes to a 3-byte U+FFFD) lines before a match: its line number must not move.
  await fsp.writeFile(path.join(fx.dsh.dir, 'aa11bb27-invalid.txt'), Buffer.concat([Buffer.from('garbage '), Buffer.alloc(300, 0xff), Buffer.from('\nrow 2 \xff\xfe\nrow 3 NEEDLE here step 3999 ok\n', 'latin1')]));
  // Unicode's White_Space, as ripgrep's \s: U+0085 is one, U+FEFF is not.
  await fsp.writeFile(path.join(fx.dsh.dir, 'aa11bb30-spaces.txt'), 'nel\u0085x NEEDLE\nbom\ufeffx NEEDLE\nnbsp\u00a0x NEEDLE\n');
  // A regex's literal on near lines, non-ASCII between them: they reach its worker as one stretch.
  await fsp.writeFile(path.join(fx.dsh.dir, 'aa11bb25-near.txt'), 'Ünïcödé NEEDLE one\nnaïve filler\nNEEDLE two end\nplain\n');
  catalog = new Catalog({ env: fx.env, roots: fx.userRoots });
  await catalog.scan();
  paths = catalog.sessions().flatMap((s) => s.blobs.map((b) => b.path));
});
afterAll(async () => {
  await catalog.dispose();
  await fsp.rm(dir, { recursive: true, force: true });
});

async function run(engine: 'rg' | 'node', options: Omit<GrepOptions, 'engine'>): Promise<string[]> {
  const matches: GrepMatch[] = [];
  const summary = await catalog.grep({ maxResults: 1_000_000, ...options, engine }, (m) => matches.push(m));
  expect(summary.engine).toBe(engine);
  return matches.map((m) => `${m.path}:${m.line}:${m.text}`).sort();
}

describe('grep parity (ripgrep vs Node)', () => {
  it('ripgrep is installed (CI: apt-get install -y ripgrep)', () => {
    expect(findRipgrep()).toBeDefined();
    expect(execFileSync(findRipgrep()!, ['--version'], { encoding: 'utf8' })).toMatch(/ripgrep/);
  });

  const cases: Array<[string, Omit<GrepOptions, 'engine'>]> = [
    ['a literal', { pattern: 'NEEDLE' }],
    ['a case-insensitive literal', { pattern: 'needle', ignoreCase: true }],
    ['a literal with regex characters', { pattern: 'npm ERR! build failed: exit code 2' }],
    ['a regex', { pattern: 'step 39[0-9]{2} ok$', regex: true }],
    ['an anchored case-insensitive regex', { pattern: '^(über|naïve)', regex: true, ignoreCase: true }],
    ['a regex over the big blob', { pattern: 'line 12345[0-9] of', regex: true }],
    ['a case-insensitive regex with a literal prefilter', { pattern: 'STEP 39\\d\\d ok$', regex: true, ignoreCase: true }],
    ['a case-insensitive literal over non-ASCII text', { pattern: 'ÜBER', ignoreCase: true }],
    ['a regex with alternation', { pattern: 'naïve|build failed', regex: true }],
    // Its literal also sits on lines it does not match, some after non-ASCII lines in the same file.
    ['a regex whose literal is on lines it does not match', { pattern: 'NEEDLE.*end$', regex: true }],
    ['a regex matching only after non-ASCII lines', { pattern: 'N[E]EDLE at', regex: true }],
    // Empty lines only: none made up past a chunk's last '\n'.
    ['a regex that can match an empty line', { pattern: '^\\s*$', regex: true }],
    ['a regex with a hex escape', { pattern: '\\x4eEEDLE', regex: true }],
    ['an anchored regex on a line after a byte-order mark', { pattern: '^NEEDLE at', regex: true }],
    ['a regex with \\w and \\b over non-ASCII words', { pattern: '^\\w+ NEEDLE\\b', regex: true }],
    ['a regex with \\s and \\S over Unicode spaces', { pattern: '^[a-z]+\\sx|^bom\\Sx|^[a-z]+[\\s]x N', regex: true }],
    ['a regex with \\S inside a character class', { pattern: '^bom[\\S]x|^nel[^\\S]x', regex: true }],
  ];
  for (const [name, options] of cases) {
    it(`finds the same matches for ${name}`, async () => {
      const [viaRg, viaNode] = [await run('rg', options), await run('node', options)];
      expect(viaRg.length).toBeGreaterThan(0);
      expect(viaNode).toEqual(viaRg);
    });
  }

  it('clips long lines the same way', async () => {
    const options = { pattern: 'é', maxLineChars: 20 };
    const long = path.join(fx.dsh.dir, 'aa11bb25-long.txt');
    await fsp.writeFile(long, 'x'.repeat(5000) + 'é' + '\n');
    const viaRg = await grep({ ...options, paths: [long], engine: 'rg' }, () => undefined);
    const got: string[][] = [[], []];
    await grep({ ...options, paths: [long], engine: 'rg' }, (m) => got[0]!.push(m.text));
    await grep({ ...options, paths: [long], engine: 'node' }, (m) => got[1]!.push(m.text));
    expect(viaRg.matches).toBe(1);
    expect(got[0]).toEqual(['x'.repeat(20) + '…']);
    expect(got[1]).toEqual(got[0]);
  });
});

describe('grep behaviour', () => {
  for (const engine of ['rg', 'node'] as const) {
    it(`${engine}: stops at the cap, reports progress, skips binary blobs by default`, async () => {
      const progress: GrepProgress[] = [];
      const matches: GrepMatch[] = [];
      const summary = await catalog.grep({ pattern: 'line', maxResults: 7, engine }, (m) => matches.push(m), undefined, (p) => progress.push(p));
      expect(matches).toHaveLength(7);
      expect(summary.truncated).toBe(true);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.at(-1)!.matches).toBe(7);
      const binary = await catalog.grep({ pattern: 'PNG', engine }, () => undefined);
      expect(binary.matches).toBe(0);
    });

    it(`${engine}: cancels through an AbortSignal`, async () => {
      const controller = new AbortController();
      let seen = 0;
      const summary = await grep({ pattern: 'hay', paths: [fx.claude.big!], maxResults: 10_000_000, engine }, () => {
        if (++seen === 100) controller.abort();
      }, controller.signal);
      expect(summary.cancelled).toBe(true);
      expect(seen).toBeLessThan(1_000_000);
    });

    it(`${engine}: reports a vanished file and goes on`, async () => {
      const gone = path.join(dir, 'gone.txt');
      const summary = await grep({ pattern: 'kubectl', paths: [gone, fx.spillway.blob], engine, maxResults: 100_000 }, () => undefined);
      expect(summary.matches).toBe(2000);
      expect(summary.errors.map((e) => e.path)).toEqual([gone]);
    });
  }

  it('uses an explicit ripgrep path and refuses a bad one', async () => {
    const summary = await grep({ pattern: 'kubectl', paths: [fx.spillway.blob], rgPath: findRipgrep() }, () => undefined);
    expect(summary.engine).toBe('rg');
    await expect(grep({ pattern: 'x', paths: [], engine: 'rg', rgPath: path.join(dir, 'no-rg') }, () => undefined)).rejects.toThrow(/not executable/);
    const fallback = await grep({ pattern: 'kubectl', paths: [fx.spillway.blob], rgPath: path.join(dir, 'no-rg') }, () => undefined);
    expect(fallback.engine).toBe('node');
  });
});

describe("each engine's own regex syntax", () => {
  it("ripgrep's syntax is ripgrep's to check: (?i) runs there; its parse error comes whole, with the caret", async () => {
    expect(await run('rg', { pattern: '(?i)über needle', regex: true })).toEqual([expect.stringMatching(/aa11bb22-odd\.txt:1:Über NEEDLE/)]);
    await expect(catalog.grep({ pattern: '(?i)needle', regex: true, engine: 'node' }, () => undefined)).rejects.toThrow(/invalid regular expression/);
    await expect(catalog.grep({ pattern: 'x{', regex: true, engine: 'rg' }, () => undefined)).rejects.toThrow(/x\{\n\s*\^\nerror: unclosed counted repetition/);
    for (const regex of [false, true]) {
      for (const engine of ['rg', 'node'] as const) {
        await expect(catalog.grep({ pattern: '', regex, engine }, () => undefined)).rejects.toThrow(/empty pattern/);
        await expect(catalog.grep({ pattern: 'a\nb', regex, engine }, () => undefined)).rejects.toThrow(/newline/);
      }
    }
  });
});

describe('the 60 MB blob', () => {
  it('slices deep lines without loading it, reusing the sparse index, and previews only its head', async () => {
    const big = fx.claude.big!;
    const total = await countLines(big);
    expect(total).toBeGreaterThan(1_500_000);
    expect(indexedCheckpoints(big)).toBe(Math.floor(total / 1024) + 1);
    const deep = await readSlice(big, 1_500_000, 1_500_002);
    expect(deep.text.split('\n')).toEqual([1_500_000, 1_500_001, 1_500_002].map((n) => `line ${n} of the big blob ${n % 97 === 0 ? 'NEEDLE' : 'hay'}`));
    const last = await readSlice(big, total, total + 5);
    expect(last).toMatchObject({ startLine: total, endLine: total, eof: true });
    const head = await catalog.preview(big);
    expect(head.preview.length).toBeLessThanOrEqual(2048);
    expect(head.preview.startsWith('line 1 of the big blob hay\n')).toBe(true);
  });
});
