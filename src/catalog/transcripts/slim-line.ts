// A transcript line made ready for JSON.parse without the bulk of a field the
// reader never looks into. Claude Code's user lines carry `toolUseResult`,
// which repeats a tool's output (tens of KB per line, most of a real
// transcript's bytes) when the catalog reads only `persistedOutputPath` of it.
// Values are skipped by their quotes and brackets, strings by memchr
// (Buffer.indexOf): far cheaper than decoding and parsing them.

/** Lines whose top-level `type` is `type` are read with `field`'s value cut to its `keep` keys. */
export interface SlimField {
  type: string;
  field: string;
  keep: readonly string[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/** A member of a JSON object: its key's raw bytes (between the quotes) and its value's. */
interface Member {
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

/** Precomputed bytes of a SlimField, compared raw against a line's. */
export class SlimReader {
  private readonly type: Buffer;
  private readonly typeValue: Buffer;
  private readonly field: Buffer;
  private readonly keep: Buffer[];

  constructor(slim: SlimField) {
    this.type = Buffer.from('type');
    this.typeValue = Buffer.from(JSON.stringify(slim.type));
    this.field = Buffer.from(slim.field);
    this.keep = slim.keep.map((key) => Buffer.from(key));
  }

  /**
   * The line `bytes[start, end)` as text with the field's value cut to its kept keys, or
   * undefined when the line is not one to cut (another type, no such field, a key written
   * with escapes, not an object): the caller then decodes it whole. What is cut is not
   * checked beyond its quotes and brackets; what is kept goes through JSON.parse as ever.
   */
  text(bytes: Buffer, start: number, end: number): string | undefined {
    const members = membersOf(bytes, start, end);
    if (!members) return undefined;
    let typed = false;
    const cut: Member[] = [];
    for (const m of members) {
      // A key written with an escape may spell any name: not ours to judge.
      if (escapes(bytes, m.keyStart, m.keyEnd)) return undefined;
      // The last of repeated keys counts, as for JSON.parse.
      if (same(bytes, m.keyStart, m.keyEnd, this.type)) typed = same(bytes, m.valueStart, m.valueEnd, this.typeValue);
      else if (same(bytes, m.keyStart, m.keyEnd, this.field) && bytes[m.valueStart] === LBRACE) cut.push(m);
    }
    if (!typed || cut.length === 0) return undefined;
    let text = '';
    let at = start;
    for (const m of cut) {
      const inner = membersOf(bytes, m.valueStart, m.valueEnd);
      if (!inner) return undefined;
      // Kept: the named keys, and any key written with an escape (it may be one of them).
      const kept = inner
        .filter((k) => this.keep.some((key) => same(bytes, k.keyStart, k.keyEnd, key)) || escapes(bytes, k.keyStart, k.keyEnd))
        .map((k) => bytes.toString('utf8', k.keyStart - 1, k.valueEnd));
      text += `${bytes.toString('utf8', at, m.valueStart)}{${kept.join(',')}}`;
      at = m.valueEnd;
    }
    return text + bytes.toString('utf8', at, end);
  }
}

function same(bytes: Buffer, start: number, end: number, expected: Buffer): boolean {
  if (end - start !== expected.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[start + i] !== expected[i]) return false;
  return true;
}

function escapes(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i] === BACKSLASH) return true;
  return false;
}

function isSpace(b: number | undefined): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function skipSpace(bytes: Buffer, p: number, end: number): number {
  while (p < end && isSpace(bytes[p])) p++;
  return p;
}

/**
 * Escaped quotes one string may hold before the line is left to JSON.parse: each costs a
 * step here, and a line dense with them is parsed whole faster than it is cut.
 */
const ESCAPED_QUOTES = 16;

/** Whether the quote at `q` is escaped: in valid JSON, an odd run of backslashes before it (counted back to `start`). */
function escapedAt(bytes: Buffer, start: number, q: number): boolean {
  let backslashes = 0;
  while (q - 1 - backslashes >= start && bytes[q - 1 - backslashes] === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

/** The end (past the closing quote) of the string opening at `p`, or -1 (unclosed, or too many escaped quotes). */
function stringEnd(bytes: Buffer, p: number, end: number): number {
  let escaped = 0;
  for (let q = bytes.indexOf(QUOTE, p + 1); q !== -1 && q < end; q = bytes.indexOf(QUOTE, q + 1)) {
    if (!escapedAt(bytes, p, q)) return q + 1;
    if (++escaped > ESCAPED_QUOTES) return -1;
  }
  return -1;
}

/** The end of the JSON value starting at `p` (no space before it), or -1 when it does not close before `end`. */
function valueEnd(bytes: Buffer, p: number, end: number): number {
  const first = bytes[p];
  if (first === QUOTE) return stringEnd(bytes, p, end);
  if (first === LBRACE || first === LBRACKET) {
    let depth = 0;
    for (let i = p; i < end; i++) {
      const b = bytes[i];
      if (b === QUOTE) {
        const after = stringEnd(bytes, i, end);
        if (after === -1) return -1;
        i = after - 1;
      } else if (b === LBRACE || b === LBRACKET) depth++;
      else if ((b === RBRACE || b === RBRACKET) && --depth === 0) return i + 1;
    }
    return -1;
  }
  // A number, true, false or null: up to what ends it.
  let i = p;
  while (i < end && bytes[i] !== COMMA && bytes[i] !== RBRACE && bytes[i] !== RBRACKET && !isSpace(bytes[i])) i++;
  return i > p ? i : -1;
}

/** The members of the object spanning exactly `bytes[start, end)` (spaces around it allowed), or undefined. */
function membersOf(bytes: Buffer, start: number, end: number): Member[] | undefined {
  const at = (i: number): number | undefined => (i < end ? bytes[i] : undefined);
  let p = skipSpace(bytes, start, end);
  if (at(p) !== LBRACE) return undefined;
  p = skipSpace(bytes, p + 1, end);
  const members: Member[] = [];
  if (at(p) === RBRACE) return skipSpace(bytes, p + 1, end) === end ? members : undefined;
  for (;;) {
    if (at(p) !== QUOTE) return undefined;
    const keyEnd = stringEnd(bytes, p, end);
    if (keyEnd === -1) return undefined;
    const colon = skipSpace(bytes, keyEnd, end);
    if (at(colon) !== COLON) return undefined;
    const valueStart = skipSpace(bytes, colon + 1, end);
    const after = valueStart < end ? valueEnd(bytes, valueStart, end) : -1;
    if (after === -1) return undefined;
    members.push({ keyStart: p + 1, keyEnd: keyEnd - 1, valueStart, valueEnd: after });
    p = skipSpace(bytes, after, end);
    if (at(p) === COMMA) p = skipSpace(bytes, p + 1, end);
    else if (at(p) === RBRACE) return skipSpace(bytes, p + 1, end) === end ? members : undefined;
    else return undefined;
  }
}

const TYPE = Buffer.from('type');

/** A byte of a number, true, false or null. */
function isLiteralByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x7a) || b === 0x2e || b === 0x2b || b === 0x2d || b === 0x45;
}

/**
 * The opening quote, at or after `from`, of the string whose closing quote is at `close`, or -1. Backslashes are
 * counted back to the line's `start`.
 */
function openingQuote(bytes: Buffer, start: number, from: number, close: number): number {
  for (let q = bytes.lastIndexOf(QUOTE, close - 1); q >= from; q = bytes.lastIndexOf(QUOTE, q - 1)) {
    if (!escapedAt(bytes, start, q)) return q;
  }
  return -1;
}

/** How far back from a line's end typeFromEnd looks: Claude Code's members after an attachment take some 300 bytes. */
const TAIL_BYTES = 4096;

/**
 * The raw text of the top-level `type`'s value (a string with its quotes) in the object line `bytes[start, end)`,
 * found from its end across the scalar members after it; undefined once a member's value is an object or array, a
 * key holds an escape, or the line is no object. Claude Code writes its attachment lines with `type` after their one
 * large value (`{"parentUuid":…,"attachment":{…},"type":"attachment","uuid":…}`): a few short members are read, not
 * the value.
 */
export function typeFromEnd(bytes: Buffer, start: number, end: number): string | undefined {
  // Within the line's last TAIL_BYTES: a line whose members after its body are longer is parsed (each escaped quote
  // would cost a step here).
  const from = Math.max(start, end - TAIL_BYTES);
  let p = end - 1;
  const back = (): void => {
    while (p >= from && isSpace(bytes[p])) p--;
  };
  back();
  if (bytes[p] !== RBRACE) return undefined;
  p--;
  for (;;) {
    back();
    // The value: a string, or a number, true, false or null.
    let valueStart: number;
    const valueEnd = p + 1;
    if (bytes[p] === QUOTE) valueStart = openingQuote(bytes, start, from, p);
    else {
      // An object or array ends here: what is in it is not read.
      if (!isLiteralByte(bytes[p]!)) return undefined;
      valueStart = p;
      while (valueStart > from && isLiteralByte(bytes[valueStart - 1]!)) valueStart--;
    }
    if (valueStart < from + 1) return undefined;
    p = valueStart - 1;
    back();
    if (bytes[p] !== COLON) return undefined;
    p--;
    back();
    if (bytes[p] !== QUOTE) return undefined;
    const keyStart = openingQuote(bytes, start, from, p);
    if (keyStart === -1 || escapes(bytes, keyStart + 1, p)) return undefined;
    if (same(bytes, keyStart + 1, p, TYPE)) return bytes.toString('utf8', valueStart, valueEnd);
    p = keyStart - 1;
    back();
    if (bytes[p] !== COMMA) return undefined;
    p--;
  }
}
