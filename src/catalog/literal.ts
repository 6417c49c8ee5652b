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

/** A byte string to find, searched from its rarest byte. */
export class Literal {
  /** Where the rarest byte sits in `bytes`. */
  private readonly anchor: number;
  /** `bytes` from the anchor on: what Buffer.indexOf looks for. */
  private readonly tail: Buffer;

  constructor(readonly bytes: Buffer) {
    let anchor = 0;
    for (let i = 1; i < bytes.length; i++) if (RARITY[bytes[i]!]! > RARITY[bytes[anchor]!]!) anchor = i;
    this.anchor = anchor;
    this.tail = bytes.subarray(anchor);
  }

  /** Where the literal first occurs in `haystack` at or after `from`, or -1. */
  indexIn(haystack: Buffer, from = 0): number {
    const { anchor, tail, bytes } = this;
    for (let at = from + anchor; ; at++) {
      at = haystack.indexOf(tail, at);
      if (at === -1) return -1;
      if (anchor === 0 || haystack.compare(bytes, 0, anchor, at - anchor, at) === 0) return at - anchor;
    }
  }
}
