// JSON-shaped tool results: what counts as text, how the digest budget is
// water-filled across string leaves, and the blob that holds the full value.
//
// Blob format for a JSON value (a string result is stored as-is): line 1 is
// `{"spillway":"value","v":1,"value":<the value, every cut leaf replaced by
// {"$section":k}>}`; then for each cut leaf `--- section k: <path> (<bytes>
// bytes) ---`, its raw text, and one newline. The raw text keeps its own
// lines, so read-with-offset and grep work on it; `parseValueBlob` restores the
// exact value.
import { countNewlines, utf8Bytes } from './text';

export type JsonPath = (string | number)[];

export interface StringLeaf {
  path: JsonPath;
  value: string;
  bytes: number;
  /** Position in document order. */
  index: number;
}

export type OutputClass =
  | { kind: 'text'; text: string }
  | { kind: 'value'; leaves: StringLeaf[] }
  | { kind: 'non-text'; why: string };

const MAX_DEPTH = 64;
/** A `type` string up to this long names a block's kind (kept whole); a longer one is text like any other. */
const STRUCTURAL_MAX_CHARS = 64;
const BINARY_BLOCK_TYPES = new Set(['image', 'audio', 'video', 'document', 'blob', 'resource', 'file', 'input_image']);

/** Decide whether a result is text we may digest; anything binary or exotic is left alone. */
export function classifyOutput(output: unknown): OutputClass {
  if (typeof output === 'string') return { kind: 'text', text: output };
  if (output === null || typeof output !== 'object') return { kind: 'non-text', why: `a ${output === null ? 'null' : typeof output} result` };
  const leaves: StringLeaf[] = [];
  const seen = new Set<object>();
  const why = walk(output, [], 0, seen, leaves);
  return why ? { kind: 'non-text', why } : { kind: 'value', leaves };
}

function walk(v: unknown, path: JsonPath, depth: number, seen: Set<object>, leaves: StringLeaf[]): string | undefined {
  if (typeof v === 'string') {
    // A block's `type` (MCP's and the API's `{type: "text", text}`) is its shape, not its content: never cut.
    if (path[path.length - 1] === 'type' && v.length <= STRUCTURAL_MAX_CHARS) return undefined;
    leaves.push({ path, value: v, bytes: utf8Bytes(v), index: leaves.length });
    return undefined;
  }
  if (v === null || typeof v === 'number' || typeof v === 'boolean' || v === undefined) return undefined;
  if (typeof v !== 'object') return `holds a ${typeof v}`;
  if (depth > MAX_DEPTH) return 'nested too deeply';
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return 'holds binary data';
  if (seen.has(v)) return 'holds a cycle';
  const proto = Object.getPrototypeOf(v);
  if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) return `holds a ${proto?.constructor?.name ?? 'non-plain'} object`;
  seen.add(v);
  try {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const why = walk(v[i], [...path, i], depth + 1, seen, leaves);
        if (why) return why;
      }
      return undefined;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.type === 'string' && BINARY_BLOCK_TYPES.has(o.type)) return `holds a ${o.type} block`;
    if (o.isImage === true) return 'is an image';
    for (const [k, child] of Object.entries(o)) {
      const why = walk(child, [...path, k], depth + 1, seen, leaves);
      if (why) return why;
    }
    return undefined;
  } finally {
    seen.delete(v);
  }
}

export function formatJsonPath(path: JsonPath): string {
  return '$' + path.map((p) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`)).join('');
}

export interface ValuePlan {
  /** Leaves kept whole. */
  whole: StringLeaf[];
  /** Leaves cut to a head/tail digest of `share` bytes. */
  digested: { leaf: StringLeaf; share: number }[];
  /** Leaves too many to each carry a notice: emptied, named in the largest digest's notice. */
  emptied: StringLeaf[];
}

/** A cut leaf needs room for its notice plus some text; below this it is emptied instead. */
export const MIN_CUT_SHARE = 512;

/**
 * Water-fill `budgetBytes` across the string leaves smallest first: each leaf
 * that fits an equal share of what is left stays whole (so a short `stderr`
 * beside a huge `stdout` survives), the rest share the remainder equally.
 */
export function planValueDigest(leaves: StringLeaf[], budgetBytes: number): ValuePlan {
  const asc = [...leaves].sort((a, b) => a.bytes - b.bytes || a.index - b.index);
  let left = Math.max(0, Math.floor(budgetBytes));
  const whole: StringLeaf[] = [];
  let i = 0;
  for (; i < asc.length; i++) {
    const leaf = asc[i]!;
    if (leaf.bytes > Math.floor(left / (asc.length - i))) break;
    whole.push(leaf);
    left -= leaf.bytes;
  }
  const cut = asc.slice(i);
  if (cut.length === 0) return { whole, digested: [], emptied: [] };
  if (cut.every((leaf) => leaf.bytes <= MIN_CUT_SHARE)) return keepListEnds(whole, cut, left);
  const room = Math.max(1, Math.floor(left / MIN_CUT_SHARE));
  const digestedLeaves = cut.slice(Math.max(0, cut.length - room));
  const emptied = cut.slice(0, cut.length - digestedLeaves.length);
  const share = Math.floor(left / digestedLeaves.length);
  return { whole, digested: digestedLeaves.map((leaf) => ({ leaf, share })), emptied };
}

/** Room kept for the notice that names the emptied fields (it goes in the first of them). */
const LIST_NOTICE_BYTES = 400;

/**
 * Only short fields left to cut (a list of file names, of search hits): none has text worth a head and
 * tail of its own, so the first and the last of them stay whole, in document order (2/3 and 1/3 of what
 * is left, as a command's digest weighs them), and those between are emptied.
 */
function keepListEnds(whole: StringLeaf[], cut: StringLeaf[], left: number): ValuePlan {
  const inOrder = [...cut].sort((a, b) => a.index - b.index);
  const room = Math.max(0, left - LIST_NOTICE_BYTES);
  let headLeft = Math.floor((room * 2) / 3);
  let tailLeft = room - headLeft;
  let h = 0;
  while (h < inOrder.length && inOrder[h]!.bytes <= headLeft) headLeft -= inOrder[h++]!.bytes;
  let t = inOrder.length;
  while (t > h && inOrder[t - 1]!.bytes <= tailLeft) tailLeft -= inOrder[--t]!.bytes;
  return { whole: [...whole, ...inOrder.slice(0, h), ...inOrder.slice(t)], digested: [], emptied: inOrder.slice(h, t) };
}

/** Cut leaves in document order, with the blob lines that precede each one's text. */
export function sectionLayout(plan: ValuePlan): { sections: StringLeaf[]; lineOffsets: Map<number, number> } {
  const sections = [...plan.digested.map((d) => d.leaf), ...plan.emptied].sort((a, b) => a.index - b.index);
  const lineOffsets = new Map<number, number>();
  let lines = 1; // the skeleton line
  for (const leaf of sections) {
    lines += 1; // the section header
    lineOffsets.set(leaf.index, lines);
    lines += countNewlines(Buffer.from(leaf.value, 'utf8')) + 1;
  }
  return { sections, lineOffsets };
}

/** The full value as one text file (see the module comment for the format). */
export function renderValueBlob(value: unknown, plan: ValuePlan): string {
  const { sections } = sectionLayout(plan);
  const sectionNo = new Map(sections.map((leaf, k) => [leaf.index, k + 1]));
  const skeleton = replaceLeaves(value, sections, (leaf) => ({ $section: sectionNo.get(leaf.index) }));
  const parts: string[] = [JSON.stringify({ spillway: 'value', v: 1, value: skeleton }) + '\n'];
  for (const leaf of sections) {
    parts.push(`--- section ${sectionNo.get(leaf.index)}: ${formatJsonPath(leaf.path)} (${leaf.bytes} bytes) ---\n`, leaf.value, '\n');
  }
  return parts.join('');
}

/** Inverse of renderValueBlob. Throws on a blob that is not in that format. */
export function parseValueBlob(content: string): unknown {
  const buf = Buffer.from(content, 'utf8');
  let at = buf.indexOf(0x0a);
  if (at < 0) throw new Error('not a spillway value blob');
  const header = JSON.parse(buf.subarray(0, at).toString('utf8')) as { spillway?: string; value?: unknown };
  if (header.spillway !== 'value') throw new Error('not a spillway value blob');
  at += 1;
  const texts = new Map<number, string>();
  const headerRe = /^--- section (\d+): .* \((\d+) bytes\) ---$/;
  while (at < buf.length) {
    const eol = buf.indexOf(0x0a, at);
    const m = headerRe.exec(buf.subarray(at, eol).toString('utf8'));
    if (!m) throw new Error(`bad section header at byte ${at}`);
    const start = eol + 1;
    const end = start + Number(m[2]);
    texts.set(Number(m[1]), buf.subarray(start, end).toString('utf8'));
    at = end + 1;
  }
  return restore(header.value, texts);
}

function restore(v: unknown, texts: Map<number, string>): unknown {
  if (Array.isArray(v)) return v.map((x) => restore(x, texts));
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && typeof o.$section === 'number' && texts.has(o.$section)) return texts.get(o.$section);
    return Object.fromEntries(keys.map((k) => [k, restore(o[k], texts)]));
  }
  return v;
}

/** Copy of `value` with the given leaves replaced (other values shared or copied as JSON). */
/** What `by` returns for a list's item that is to be left out of the list (an emptied file name). */
export const DROP_ITEM: unique symbol = Symbol('drop');

export function replaceLeaves(value: unknown, leaves: StringLeaf[], by: (leaf: StringLeaf) => unknown): unknown {
  const byPath = new Map(leaves.map((l) => [JSON.stringify(l.path), l]));
  const go = (v: unknown, path: JsonPath): unknown => {
    if (typeof v === 'string') {
      const leaf = byPath.get(JSON.stringify(path));
      return leaf ? by(leaf) : v;
    }
    if (Array.isArray(v)) return v.map((x, i) => go(x, [...path, i])).filter((x) => x !== DROP_ITEM);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, go(x, [...path, k])]));
    return v;
  };
  return go(value, []);
}
