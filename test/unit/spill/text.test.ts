import { describe, expect, it } from 'vitest';
import { ContentTally, countLines, decodeWithin, looksLikeText, sha256Hex, TextCheck } from '../../../src/spill/text';

/** `bytes` cut at every offset in `cuts` and fed piece by piece. */
function pieces(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  return at.slice(1).map((end, i) => bytes.subarray(at[i], end));
}

describe('TextCheck', () => {
  const text = Buffer.from('a\u00e9\u5efa\u7acb\u{1f600}\r\n\u00df\u{10ffff}z', 'utf8');
  const long = Buffer.from('\u5efa'.repeat(4000), 'utf8'); // 12,000 bytes: the 8 KiB probe ends inside a character
  const samples: Buffer[] = [
    text,
    long,
    Buffer.concat([long, Buffer.from([0xff])]), // a stray byte past the probe: still text
    Buffer.concat([text, Buffer.from([0xe2, 0x80])]), // a cut character within the probe
    Buffer.concat([Buffer.from([0xc3]), text]),
    Buffer.concat([long, Buffer.from([0x00]), text]), // a NUL is UTF-8 (find -print0)
    Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate
    Buffer.alloc(0),
    Buffer.concat([Buffer.alloc(8191, 0x61), Buffer.from([0xff]), long]), // a byte no character starts with, last in the probe
    Buffer.concat([Buffer.alloc(8190, 0x61), Buffer.from([0xe0, 0x80]), long]), // E0 80 starts none either
  ];

  it('judges as looksLikeText does on the whole, however the bytes are cut', () => {
    expect(samples.map(looksLikeText)).toEqual([true, true, true, false, false, true, false, true, false, false]);
    for (const bytes of samples) {
      for (const cuts of [[1], [8191, 8192], [3, 8193], [bytes.length - 1]]) {
        const check = new TextCheck();
        for (const piece of pieces(bytes, cuts)) check.add(piece);
        expect(check.isText, `${bytes.length} bytes cut at ${cuts}`).toBe(looksLikeText(bytes));
      }
    }
  });
});

describe('decodeWithin', () => {
  it('is toString for UTF-8, and never longer in UTF-8 than the bytes: one `?` per stray byte', () => {
    expect(decodeWithin(Buffer.from('h\u00e9 \u{1f600}\ufffd', 'utf8'))).toBe('h\u00e9 \u{1f600}\ufffd');
    expect(decodeWithin(Buffer.from([0x61, 0xff, 0xe2, 0x82, 0x62, 0xf0, 0x9f, 0x98, 0x80, 0xc0, 0xaf, 0xed, 0xa0, 0x80]))).toBe('a???b\u{1f600}?????');
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
    for (let n = 0; n < 2000; n++) {
      const bytes = Buffer.from(Array.from({ length: n % 40 }, random));
      const out = decodeWithin(bytes);
      expect(Buffer.byteLength(out)).toBeLessThanOrEqual(bytes.length);
      expect(out.replace(/\?/g, '')).toBe(new TextDecoder().decode(bytes).replace(/[\ufffd?]/g, ''));
    }
  });
});

describe('ContentTally', () => {
  it('counts as countLines and sha256Hex do, whatever the pieces', () => {
    for (const s of ['', 'a', 'a\n', 'a\nb', '\n\n', 'x\ny\nz\n']) {
      const bytes = Buffer.from(s);
      for (let cut = 0; cut <= bytes.length; cut++) {
        const tally = new ContentTally();
        for (const piece of pieces(bytes, [cut])) tally.add(piece);
        expect(tally.finish()).toEqual({ sha256: sha256Hex(bytes), bytes: bytes.length, lines: countLines(bytes) });
      }
    }
  });
});
