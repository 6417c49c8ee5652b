import { describe, expect, it } from 'vitest';
import type { BlobInfo, GrepMatch, SessionInfo } from '../../../src/catalog/types';
import { ignoresCase, lineRow, matchRanges, matcherFor, searchSummary, SearchResults } from '../../../src/extension/searchModel';

function blob(path: string, sessionKey: string): BlobInfo {
  return { key: path, path, sessionKey, name: path.split('/').pop()!, kind: 'tool-result', tool: 'Bash', args: 'make', bytes: 100, createdAt: '2026-01-01T00:00:00Z', mtimeMs: 0, attribution: 'transcript' };
}

const s1: SessionInfo = { key: 'a', source: 'claude-code', id: 'a', dir: '/a', root: '/', bytes: 0, updatedAt: '2026-01-01T00:00:00Z', blobs: [blob('/a/1.txt', 'a'), blob('/a/2.txt', 'a')], skipped: 0, notes: [] };
const s2: SessionInfo = { ...s1, key: 'b', id: 'b', dir: '/b', blobs: [blob('/b/3.txt', 'b')] };
const lookup = (p: string) => {
  for (const session of [s1, s2]) {
    const b = session.blobs.find((x) => x.path === p);
    if (b) return { blob: b, session };
  }
  return undefined;
};

describe('search model', () => {
  it('reads smart case the way rg -S does', () => {
    expect(ignoresCase({ pattern: 'error', regex: false, matchCase: false })).toBe(true);
    expect(ignoresCase({ pattern: 'Error', regex: false, matchCase: false })).toBe(false);
    expect(ignoresCase({ pattern: 'error', regex: false, matchCase: true })).toBe(false);
    // Escapes are not letters the user typed in upper case.
    expect(ignoresCase({ pattern: 'fail\\W+\\S', regex: true, matchCase: false })).toBe(true);
    expect(ignoresCase({ pattern: '\\p{Lu}x', regex: true, matchCase: false })).toBe(true);
    expect(ignoresCase({ pattern: 'E\\d+', regex: true, matchCase: false })).toBe(false);
    // "error" finds ERROR lines; "Error" does not.
    expect(matchRanges('ERROR: x error', matcherFor({ pattern: 'error', regex: false, matchCase: false }))).toEqual([[0, 5], [9, 14]]);
    expect(matchRanges('ERROR: x error', matcherFor({ pattern: 'Error', regex: false, matchCase: false }))).toEqual([]);
    // A literal's regex characters are literal; an empty regex match never loops.
    expect(matchRanges('a.b axb', matcherFor({ pattern: 'a.b', regex: false, matchCase: false }))).toEqual([[0, 3]]);
    expect(matchRanges('abc', matcherFor({ pattern: 'x*', regex: true, matchCase: false }))).toEqual([]);
    expect(() => matcherFor({ pattern: 'a(', regex: true, matchCase: false })).toThrow(/invalid regular expression/);
    // Said once, not "invalid regular expression: Invalid regular expression: ...".
    let message = '';
    try {
      matcherFor({ pattern: 'a(', regex: true, matchCase: false });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.match(/invalid regular expression/gi)).toHaveLength(1);
    expect(message).toContain('a(');
  });

  it('shows the line number first and the match close to the start, highlighted', () => {
    const re = matcherFor({ pattern: 'needle', regex: false, matchCase: false });
    // A match that begins in the indentation the label leaves out is highlighted where the text shows.
    const indented = lineRow({ line: 7, text: '    foo bar' }, matcherFor({ pattern: '  foo', regex: false, matchCase: true }));
    expect(indented).toEqual({ label: '7  foo bar', highlights: [[3, 6]] });
    const short = lineRow({ line: 7, text: '    a needle here' }, re);
    expect(short.label).toBe('7  a needle here');
    expect(short.label.slice(...short.highlights[0]!)).toBe('needle');
    const long = lineRow({ line: 1234, text: `${'x'.repeat(200)} NEEDLE and needle` }, re);
    expect(long.label.startsWith('1234  …')).toBe(true);
    expect(long.highlights.map(([s, e]) => long.label.slice(s, e))).toEqual(['NEEDLE', 'needle']);
    expect(long.label.indexOf('NEEDLE')).toBeLessThan(40);
  });

  it('keeps a little context before the match, from a word, so a 300 px row shows it (a log line’s timestamp left out)', () => {
    const re = matcherFor({ pattern: 'timeout', regex: false, matchCase: false });
    const text = '2026-11-29T02:06:00.670Z [pi] bash: npm test failed: timeout after 30000ms';
    const row = lineRow({ line: 2892, text }, re);
    expect(row.label).toBe('2892  …failed: timeout after 30000ms');
    expect(row.label.slice(...row.highlights[0]!)).toBe('timeout');
    // Without a word boundary near it, at most 12 chars before the match.
    const packed = lineRow({ line: 3, text: `${'y'.repeat(80)}timeout` }, re);
    expect(packed.label).toBe(`3  …${'y'.repeat(12)}timeout`);
    // Whatever the line, the match begins within the first 30 chars of the row.
    for (const lead of ['', 'a ', 'x'.repeat(11), `${'word '.repeat(40)}`, `${'2026-11-29T02:06:00.670Z '.repeat(3)}`]) {
      const r = lineRow({ line: 123456, text: `${lead}timeout` }, re);
      expect(r.highlights[0]![0]).toBeLessThanOrEqual(8 + 1 + 12);
      expect(r.label.slice(...r.highlights[0]!)).toBe('timeout');
    }
  });

  it('caps each blob and the total, and says what it left out', () => {
    const r = new SearchResults({ pattern: 'error', regex: false, matchCase: false }, { perBlob: 3, total: 5 }, lookup);
    const m = (path: string, line: number): GrepMatch => ({ path, line, text: `error ${line}` });
    for (let i = 1; i <= 5000; i++) r.add(m('/a/1.txt', i)); // one blob's 5,000 identical lines
    r.add(m('/a/2.txt', 1));
    r.add(m('/b/3.txt', 9));
    r.add(m('/gone.txt', 1)); // deleted meanwhile: ignored
    expect(r.found).toBe(5002);
    expect(r.sessions.map((s) => [s.session.key, s.found, s.blobs.map((b) => [b.found, b.shown.length])])).toEqual([
      ['a', 5001, [[5000, 3], [1, 1]]],
      ['b', 1, [[1, 1]]],
    ]);
    expect(r.shown).toBe(5);
    expect(searchSummary(r, undefined, false)).toBe('5,002 matches in 3 blobs for "error" (text, smart case: any case) · showing 5: at most 3 per blob (1 blob cut), 5 in all');
    const one = new SearchResults({ pattern: 'E1', regex: true, matchCase: false }, { perBlob: 3, total: 5 }, lookup);
    expect(searchSummary(one, undefined, true)).toBe('No matches yet for "E1" (regex, smart case: exact case) · searching…');
    one.add(m('/b/3.txt', 1));
    expect(searchSummary(one, { matches: 1, truncated: false, cancelled: true, engine: 'rg', errors: [] }, false)).toBe('1 match in 1 blob for "E1" (regex, smart case: exact case) · cancelled');
  });
});
