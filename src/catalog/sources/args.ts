// Compact one-line renderings of a tool's input, for lists and tree rows.

const MAX_ARGS = 200;
/** Input keys that best name what a tool call did, most telling first. */
const TELLING_KEYS = ['command', 'cmd', 'pattern', 'query', 'file_path', 'filePath', 'path', 'url', 'prompt', 'description'];

export function compactArgs(input: unknown): string | undefined {
  if (input === undefined || input === null) return undefined;
  let text: string;
  if (typeof input === 'string') text = input;
  else if (typeof input === 'object' && !Array.isArray(input)) {
    const record = input as Record<string, unknown>;
    const key = TELLING_KEYS.find((k) => typeof record[k] === 'string' && record[k] !== '');
    text = key ? (record[key] as string) : stringify(input);
  } else text = stringify(input);
  text = text.replace(/\s+/g, ' ').trim();
  if (text === '' || text === '{}') return undefined;
  // A copy, so the (possibly huge) tool input string is not kept alive by a slice of it.
  return text.length > MAX_ARGS ? text.slice(0, MAX_ARGS - 1) + '…' : (' ' + text).slice(1);
}

/** JSON text of a value; '' when it has none or cannot have one (nested deeper than the stack: a RangeError must not drop the session). */
function stringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
