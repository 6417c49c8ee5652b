// Where things are in a JSON-with-comments text (what settings files of
// several agents accept): each object's and array's span, and each member's
// key, so an installer can insert or cut text in place and leave every other
// byte, comments and formatting included, as the user wrote it.

export interface JsoncObject {
  kind: 'object';
  /** Offset of `{` and just past `}`. */
  start: number;
  end: number;
  members: Array<{ key: string; keyStart: number; value: JsoncNode }>;
}
export interface JsoncArray {
  kind: 'array';
  start: number;
  end: number;
  items: JsoncNode[];
}
export interface JsoncScalar {
  kind: 'scalar';
  start: number;
  end: number;
}
export type JsoncNode = JsoncObject | JsoncArray | JsoncScalar;

export class JsoncError extends Error {}

/** The text's top-level value with the spans of everything in it; throws JsoncError on text that is not JSON with comments. */
export function parseJsoncSpans(text: string): JsoncNode {
  let i = 0;
  const fail = (what: string): never => {
    const line = text.slice(0, i).split('\n').length;
    throw new JsoncError(`${what} at line ${line}`);
  };
  const skip = (): void => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i]!)) i++;
      if (text.startsWith('//', i)) {
        const nl = text.indexOf('\n', i);
        i = nl < 0 ? text.length : nl + 1;
      } else if (text.startsWith('/*', i)) {
        const close = text.indexOf('*/', i + 2);
        if (close < 0) fail('unclosed comment');
        i = close + 2;
      } else return;
    }
  };
  const string = (): string => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('unclosed string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): JsoncNode => {
    skip();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      const members: JsoncObject['members'] = [];
      skip();
      while (text[i] !== '}') {
        if (text[i] !== '"') fail('expected a key');
        const keyStart = i;
        const key = string();
        skip();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        members.push({ key, keyStart, value: value() });
        skip();
        if (text[i] === ',') {
          i++;
          skip();
        } else if (text[i] !== '}') fail('expected "," or "}"');
      }
      i++;
      return { kind: 'object', start, end: i, members };
    }
    if (c === '[') {
      i++;
      const items: JsoncNode[] = [];
      skip();
      while (text[i] !== ']') {
        items.push(value());
        skip();
        if (text[i] === ',') {
          i++;
          skip();
        } else if (text[i] !== ']') fail('expected "," or "]"');
      }
      i++;
      return { kind: 'array', start, end: i, items };
    }
    if (c === '"') {
      string();
      return { kind: 'scalar', start, end: i };
    }
    const m = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 64));
    if (!m) fail('unexpected character');
    i += m![0].length;
    return { kind: 'scalar', start, end: i };
  };
  const top = value();
  skip();
  if (i < text.length) fail('unexpected text after the value');
  return top;
}

/** The member named `key` of an object node. */
export function memberOf(node: JsoncNode | undefined, key: string): JsoncNode | undefined {
  return node?.kind === 'object' ? node.members.find((m) => m.key === key)?.value : undefined;
}
