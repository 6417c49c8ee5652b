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
    text = key ? (record[key] as string) : JSON.stringify(input);
  } else text = JSON.stringify(input);
  text = text.replace(/\s+/g, ' ').trim();
  if (text === '' || text === '{}') return undefined;
  // A copy, so the (possibly huge) tool input string is not kept alive by a slice of it.
  return text.length > MAX_ARGS ? text.slice(0, MAX_ARGS - 1) + '…' : (' ' + text).slice(1);
}
