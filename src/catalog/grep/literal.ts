// Finding a literal in bytes. Buffer.indexOf skips ahead by the needle's
// first byte, so a needle that starts with a common byte (a space, an 'e')
// stops at nearly every position: ' ERROR' is found about 20x slower than
// 'ERROR' in log text. The search runs on the needle's rarest byte instead
// (as ripgrep does), then checks the bytes before it.

/** Bytes roughly from most to least common in tool output (text, logs, JSON); the rest are rarer than all of them. */
const COMMON = ' etaoinsrhldcu\t"\':.,/-_=0123456789mfpgwybvk()[]{}<>xjqz';
/** Higher is rarer. */
const RARITY = new Uint8Array(256).fill(255);
for (let i = 0; i < COMMON.length; i++) RARITY[COMMON.charCodeAt(i)] = i;

/**
 * A byte string to find, searched from its rarest byte. Caseless, `bytes` is
 * lowered ASCII and A-Z in the text match their lowercase: a letter is found
 * in either case, anything else with the bytes around it that are no letters
 * (so ': ' rather than ':' alone); then the whole is compared folded.
 */
export class Literal {
  /** Where the search starts in `bytes`: the rarest byte, or (caseless) the run of non-letters holding it. */
  private readonly anchor: number;
  /** What Buffer.indexOf looks for from the anchor: the rest of `bytes`, or (caseless) the run of non-letters; empty for a letter. */
  private readonly tail: Buffer;
  /** Caseless, the anchor letter in each case. */
  private readonly lower: number;
  private readonly upper: number;

  constructor(
    readonly bytes: Buffer,
    private readonly caseless = false,
  ) {
    let anchor = 0;
    for (let i = 1; i < bytes.length; i++) if (RARITY[bytes[i]!]! > RARITY[bytes[anchor]!]!) anchor = i;
    const a = bytes[anchor]!;
    this.lower = a;
    this.upper = a - 0x20;
    let end = bytes.length;
    if (caseless) {
      if (isLower(a)) end = anchor;
      else {
        while (anchor > 0 && !isLower(bytes[anchor - 1]!)) anchor--;
        end = anchor;
        while (end < bytes.length && !isLower(bytes[end]!)) end++;
      }
    }
    this.anchor = anchor;
    this.tail = bytes.subarray(anchor, end);
  }

  /** Where the literal first occurs in `haystack` at or after `from`, or -1. */
  indexIn(haystack: Buffer, from = 0): number {
    return this.caseless ? this.indexFolded(haystack, from) : this.indexExact(haystack, from);
  }

  private indexExact(haystack: Buffer, from: number): number {
    const { anchor, tail, bytes } = this;
    for (let at = from + anchor; ; at++) {
      at = haystack.indexOf(tail, at);
      if (at === -1) return -1;
      if (anchor === 0 || haystack.compare(bytes, 0, anchor, at - anchor, at) === 0) return at - anchor;
    }
  }

  private indexFolded(haystack: Buffer, from: number): number {
    const { anchor, bytes, tail, lower, upper } = this;
    const end = haystack.length - bytes.length + anchor;
    // The next anchor in each case, kept until passed (-1: none left); a run of non-letters has one case.
    let nextLower = -2;
    let nextUpper = tail.length > 0 ? -1 : -2;
    for (let at = from + anchor; ; ) {
      if (nextLower !== -1 && nextLower < at) nextLower = tail.length > 0 ? haystack.indexOf(tail, at) : haystack.indexOf(lower, at);
      if (nextUpper !== -1 && nextUpper < at) nextUpper = haystack.indexOf(upper, at);
      const hit = nextUpper === -1 || (nextLower !== -1 && nextLower < nextUpper) ? nextLower : nextUpper;
      if (hit === -1 || hit > end) return -1;
      if (this.foldedAt(haystack, hit - anchor)) return hit - anchor;
      at = hit + 1;
    }
  }

  /** `bytes` at `start` of `haystack`, A-Z lowered. */
  private foldedAt(haystack: Buffer, start: number): boolean {
    const { bytes } = this;
    for (let i = 0; i < bytes.length; i++) {
      let c = haystack[start + i]!;
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      if (c !== bytes[i]) return false;
    }
    return true;
  }
}

function isLower(byte: number): boolean {
  return byte >= 0x61 && byte <= 0x7a;
}
