// Just enough of JSON with comments (opencode.json, settings files) to edit a
// file as text: find the top-level object and one of its keys' value, skipping
// strings and comments, so an edit touches only the bytes it adds and can be
// undone byte for byte.

export interface TopLevelKey {
  /** Offset of the value's first character. */
  valueStart: number;
}

export interface JsoncTop {
  /** Offset of the top-level `{`. */
  open: number;
  /** True when the object has no member. */
  empty: boolean;
  keys: Map<string, TopLevelKey>;
}

/** Offset of the first character at or after `i` that is neither whitespace nor inside a comment. */
export function skipBlank(text: string, i: number): number {
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
    else if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new Error('unterminated comment');
      i = end + 2;
    } else break;
  }
  return i;
}

/** Offset just past the string literal starting at `i` (a `"`). */
function skipString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  throw new Error('unterminated string');
}

/** The top-level object's members (throws on a file that is not one object). */
export function scanTopLevel(text: string): JsoncTop {
  const open = skipBlank(text, text.charCodeAt(0) === 0xfeff ? 1 : 0);
  if (text[open] !== '{') throw new Error('does not hold a JSON object');
  const keys = new Map<string, TopLevelKey>();
  let depth = 0;
  let i = open;
  let expectKey = false;
  let members = 0;
  while (i < text.length) {
    i = skipBlank(text, i);
    const c = text[i];
    if (c === undefined) break;
    if (c === '"') {
      const end = skipString(text, i);
      if (depth === 1 && expectKey) {
        const colon = skipBlank(text, end);
        if (text[colon] !== ':') throw new Error(`expected ':' at offset ${colon}`);
        keys.set(JSON.parse(text.slice(i, end)) as string, { valueStart: skipBlank(text, colon + 1) });
        members++;
        expectKey = false;
        i = colon + 1;
        continue;
      }
      i = end;
      continue;
    }
    if (c === '{' || c === '[') {
      depth++;
      if (depth === 1) expectKey = true;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) {
        if (skipBlank(text, i + 1) !== text.length) throw new Error('has text after the top-level object');
        return { open, empty: members === 0, keys };
      }
    } else if (c === ',' && depth === 1) expectKey = true;
    i++;
  }
  throw new Error('the top-level object is not closed');
}
