import { describe, expect, it } from 'vitest';
import { Literal } from '../../../src/catalog/grep/literal';

/** Every position of `needle` in `text` from `from`, as Buffer.indexOf finds them. */
function positions(text: Buffer, needle: Buffer, from: number): number[] {
  const out: number[] = [];
  for (let at = text.indexOf(needle, from); at !== -1; at = text.indexOf(needle, at + 1)) out.push(at);
  return out;
}

/** Every position Literal finds in `text` from `from`. */
function found(text: Buffer, literal: Literal, from: number): number[] {
  const out: number[] = [];
  for (let at = literal.indexIn(text, from); at !== -1; at = literal.indexIn(text, at + 1)) out.push(at);
  return out;
}

/** Random texts over `alphabet` (repeatable), each with a needle taken from it (1-8 bytes) and a start. */
function* randomCases(seed: number, alphabet: string, rounds = 300): Generator<{ text: Buffer; start: number; length: number; from: number }> {
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let round = 0; round < rounds; round++) {
    const text = Buffer.alloc(200 + random(300));
    for (let i = 0; i < text.length; i++) text[i] = alphabet.charCodeAt(random(alphabet.length));
    yield { text, start: random(text.length - 8), length: 1 + random(8), from: random(20) };
  }
}

describe('Literal', () => {
  it('finds what Buffer.indexOf finds, wherever its rarest byte sits', () => {
    const text = Buffer.from(' ms status=200 ERROR at  ERROR: x ms status=200 ERRORR e ERROR\n ms status=200 ERROR');
    for (const needle of [' ms status=200 ERROR', 'ERROR', ' ERROR', 'status=200 E', 'R', ' e ', 'zz', 'RR']) {
      for (const from of [0, 1, 15, 16, 40, text.length]) {
        const bytes = Buffer.from(needle);
        expect(found(text, new Literal(bytes), from), `${JSON.stringify(needle)} from ${from}`).toEqual(positions(text, bytes, from));
      }
    }
  });

  it('agrees with Buffer.indexOf on random text (overlapping and repeated bytes)', () => {
    for (const { text, start, length, from } of randomCases(7, ' eaE:Xq\n')) {
      const needle = Buffer.from(text.subarray(start, start + length));
      expect(found(text, new Literal(needle), from)).toEqual(positions(text, needle, from));
    }
  });
});

describe('Literal, caseless', () => {
  it('finds the lowered literal in any case of A-Z, as a lowered copy of the text would', () => {
    // '@' and '[' border 'A' and 'Z': they must not fold.
    for (const { text, start, length, from } of randomCases(11, ' eEaAzZ:[@\n')) {
      const lowered = Buffer.from(text.toString('latin1').toLowerCase(), 'latin1');
      const needle = Buffer.from(lowered.subarray(start, start + length));
      expect(found(text, new Literal(needle, true), from)).toEqual(positions(lowered, needle, from));
    }
  });
});
