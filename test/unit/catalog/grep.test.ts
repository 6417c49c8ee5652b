import { describe, expect, it } from 'vitest';
import { clipLine, compilePattern, requiredLiteral } from '../../../src/catalog/grep/grep';
import { countNewlines, countNewlinesSwar, simdKernel } from '../../../src/catalog/grep/newlines';

describe('countNewlines', () => {
  it('agrees with a byte-by-byte count at every alignment and length', () => {
    const bytes = Buffer.alloc(257);
    for (let i = 0; i < bytes.length; i++) bytes[i] = i % 7 === 0 || i % 11 === 3 ? 0x0a : (i * 37) & 0xff;
    for (let start = 0; start < 9; start++) {
      for (let end = start; end <= bytes.length; end += 13) {
        let naive = 0;
        for (let i = start; i < end; i++) if (bytes[i] === 0x0a) naive++;
        expect(countNewlines(bytes.subarray(1), start, Math.min(end, 256))).toBe(countLinesNaive(bytes.subarray(1), start, Math.min(end, 256)));
        expect(countNewlines(bytes, start, end)).toBe(naive);
      }
    }
  });
  it('counts bytes next to 0x0a (0x0b, 0x8a, 0x0a0a) correctly', () => {
    expect(countNewlines(Buffer.from([0x0b, 0x8a, 0x0a, 0x0a, 0x09, 0x1a, 0x0a, 0x4a]), 0, 8)).toBe(3);
  });
  it('the SIMD kernel and the SWAR loop agree with a byte count on large, unaligned, dense and sparse buffers', () => {
    expect(simdKernel()).not.toBeNull(); // Node 20 runs wasm SIMD
    const size = 3 * 1024 * 1024 + 37;
    const dense = Buffer.alloc(size, 0x0a);
    const mixed = Buffer.alloc(size);
    for (let i = 0; i < size; i++) mixed[i] = (i * 2654435761) % 7 === 0 ? 0x0a : (i * 31) & 0xff;
    for (const buffer of [dense, mixed, Buffer.alloc(size, 0x0b)]) {
      for (const [start, end] of [[0, size], [5, size - 3], [4097, 2 * 1024 * 1024 + 1]] as const) {
        const naive = countLinesNaive(buffer, start, end);
        expect(countNewlines(buffer, start, end)).toBe(naive);
        expect(countNewlinesSwar(buffer, start, end)).toBe(naive);
      }
    }
  });
});

function countLinesNaive(buffer: Buffer, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if (buffer[i] === 0x0a) n++;
  return n;
}

describe('patterns', () => {
  it('escapes literals, rejects empty, newline and invalid patterns', () => {
    expect(compilePattern({ pattern: 'a.b(c)' }).test('xa.b(c)y')).toBe(true);
    expect(compilePattern({ pattern: 'a.b' }).test('axb')).toBe(false);
    expect(compilePattern({ pattern: 'ERROR', ignoreCase: true }).test('error')).toBe(true);
    expect(() => compilePattern({ pattern: '' })).toThrow(/empty/);
    expect(() => compilePattern({ pattern: 'a\nb' })).toThrow(/newline/);
    expect(() => compilePattern({ pattern: '(', regex: true })).toThrow(/invalid regular expression/);
    // `.` is ripgrep's: anything but a newline, a carriage return too; escaped and in classes it stays itself.
    expect(compilePattern({ pattern: 'Downloading.*done', regex: true }).test('Downloading 10%\r 100% done')).toBe(true);
    expect(compilePattern({ pattern: 'a\\.b[.]c', regex: true }).test('a.b.c')).toBe(true);
    expect(compilePattern({ pattern: 'a\\.b[.]c', regex: true }).test('axbyc')).toBe(false);
    // \w, \d and \b are Unicode's, as in ripgrep.
    expect(compilePattern({ pattern: '^\\w+$', regex: true }).test('straße')).toBe(true);
    expect(compilePattern({ pattern: '^[\\w-]+$', regex: true }).test('naïve-café')).toBe(true);
    expect(compilePattern({ pattern: '^\\W+$', regex: true }).test('ï')).toBe(false);
    expect(compilePattern({ pattern: '\\d{3}', regex: true }).test('٣٤٥')).toBe(true);
    expect(compilePattern({ pattern: '\\bcafé\\b', regex: true }).test('un café noir')).toBe(true);
    expect(compilePattern({ pattern: '\\bfé\\b', regex: true }).test('un café noir')).toBe(false);
    expect(compilePattern({ pattern: 'a\\Bb', regex: true }).test('ab')).toBe(true);
  });
  it('clips by characters with an ellipsis', () => {
    expect(clipLine('abcdef', 3)).toBe('abc…');
    expect(clipLine('abc', 3)).toBe('abc');
  });
});

describe('requiredLiteral', () => {
  it('finds the longest run every match must contain', () => {
    expect(requiredLiteral('request \\d+ in 99[0-9] ms status=200 ERROR')).toBe(' ms status=200 ERROR');
    expect(requiredLiteral('npm ERR!')).toBe('npm ERR!');
    expect(requiredLiteral('file\\.txt')).toBe('file.txt');
  });
  it('drops what a quantifier may remove, and gives up on alternation', () => {
    expect(requiredLiteral('colou?r')).toBe('colo');
    expect(requiredLiteral('abcd{2}efg')).toBe('abc');
    expect(requiredLiteral('ab*cdef')).toBe('cdef');
    expect(requiredLiteral('(foo|bar)baz')).toBeUndefined();
    expect(requiredLiteral('foo|barbaz')).toBeUndefined();
    expect(requiredLiteral('(?:optional)?xy')).toBeUndefined();
    expect(requiredLiteral('[abc]+\\w')).toBeUndefined();
  });
  it("never takes an escape's argument for literal text", () => {
    expect(requiredLiteral('\\x45RROR')).toBe('RROR');
    expect(requiredLiteral('na\\u00efve')).toBeUndefined();
    expect(requiredLiteral('\\u{1F600} smile')).toBe(' smile');
    expect(requiredLiteral('\\p{Lu}abc')).toBe('abc');
    expect(requiredLiteral('\\pLabc')).toBe('abc');
    expect(requiredLiteral('\\cJabc')).toBe('abc');
    expect(requiredLiteral('(?<w>a)\\k<w>xyz')).toBe('xyz');
    expect(requiredLiteral('(a)\\12345xyz')).toBe('xyz');
  });
});
