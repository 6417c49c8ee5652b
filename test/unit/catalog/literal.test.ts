import { describe, expect, it } from 'vitest';
import { Literal } from '../../../src/catalog/literal';

/** Every position of `needle` in `haystack` from `from`, by Buffer.indexOf (the reference) and by Literal. */
function both(haystack: Buffer, needle: Buffer, from: number): [number[], number[]] {
  const literal = new Literal(needle);
  const want: number[] = [];
  const got: number[] = [];
  for (let at = haystack.indexOf(needle, from); at !== -1; at = haystack.indexOf(needle, at + 1)) want.push(at);
  for (let at = literal.indexIn(haystack, from); at !== -1; at = literal.indexIn(haystack, at + 1)) got.push(at);
  return [got, want];
}

describe('Literal', () => {
  it('finds what Buffer.indexOf finds, wherever its rarest byte sits', () => {
    const text = Buffer.from(' ms status=200 ERROR at  ERROR: x ms status=200 ERRORR e ERROR\n ms status=200 ERROR');
    for (const needle of [' ms status=200 ERROR', 'ERROR', ' ERROR', 'status=200 E', 'R', ' e ', 'zz', 'RR']) {
      for (const from of [0, 1, 15, 16, 40, text.length]) {
        const [got, want] = both(text, Buffer.from(needle), from);
        expect(got, `${JSON.stringify(needle)} from ${from}`).toEqual(want);
      }
    }
  });

  it('agrees with Buffer.indexOf on random text (overlapping and repeated bytes)', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const alphabet = Buffer.from(' eaE:Xq\n');
    for (let round = 0; round < 300; round++) {
      const haystack = Buffer.alloc(200 + random(300));
      for (let i = 0; i < haystack.length; i++) haystack[i] = alphabet[random(alphabet.length)]!;
      const start = random(haystack.length - 8);
      // Needles taken from the text (so they occur), of 1 to 8 bytes.
      const needle = Buffer.from(haystack.subarray(start, start + 1 + random(8)));
      const [got, want] = both(haystack, needle, random(20));
      expect(got).toEqual(want);
    }
  });
});

describe('Literal, caseless', () => {
  it('finds the lowered literal in any case of A-Z, as a lowered copy of the text would', () => {
    let seed = 11;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const alphabet = Buffer.from(' eEaAzZ:[@\n');
    for (let round = 0; round < 300; round++) {
      const haystack = Buffer.alloc(200 + random(300));
      for (let i = 0; i < haystack.length; i++) haystack[i] = alphabet[random(alphabet.length)]!;
      const lowered = Buffer.from(haystack.toString('latin1').toLowerCase(), 'latin1');
      const start = random(haystack.length - 8);
      const needle = Buffer.from(lowered.subarray(start, start + 1 + random(8)));
      const literal = new Literal(needle, true);
      const from = random(20);
      const want: number[] = [];
      const got: number[] = [];
      for (let at = lowered.indexOf(needle, from); at !== -1; at = lowered.indexOf(needle, at + 1)) want.push(at);
      for (let at = literal.indexIn(haystack, from); at !== -1; at = literal.indexIn(haystack, at + 1)) got.push(at);
      expect(got).toEqual(want);
    }
  });
});
