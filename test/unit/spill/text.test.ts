import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { ContentTally, countLines, sha256Hex, Utf8Check } from '../../../src/spill/text';

/** `bytes` cut at every offset in `cuts` and fed piece by piece. */
function pieces(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  return at.slice(1).map((end, i) => bytes.subarray(at[i], end));
}

describe('Utf8Check', () => {
  const text = Buffer.from('a\u00e9\u5efa\u7acb\u{1f600}\r\n\u00df\u{10ffff}z', 'utf8');
  const samples: Buffer[] = [
    text,
    Buffer.concat([text, Buffer.from([0xe2, 0x80])]), // cut off at the end
    Buffer.concat([Buffer.from([0xc3]), text]), // a lead byte without its continuation
    Buffer.concat([text.subarray(0, 3), Buffer.from([0x80]), text]), // a stray continuation byte
    Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate
    Buffer.from([0xf4, 0x90, 0x80, 0x80]), // past U+10FFFF
    Buffer.from([0xc0, 0xaf]), // overlong
    Buffer.alloc(0),
  ];

  it('agrees with a whole-buffer check however the bytes are cut', () => {
    for (const bytes of samples) {
      for (let a = 0; a <= bytes.length; a++) {
        for (let b = a; b <= bytes.length; b++) {
          const check = new Utf8Check();
          for (const piece of pieces(bytes, [a, b])) check.add(piece);
          expect(check.isUtf8, `${bytes.toString('hex')} cut at ${a}, ${b}`).toBe(isUtf8(bytes));
        }
      }
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
