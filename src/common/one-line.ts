// One-line renderings for lists, tree rows and tooltips: a text cut short, a tool call's input in a few words.
import { jsonText } from './json-text';

/** Collapses whitespace and cuts to `max` chars with an ellipsis. */
export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let end = Math.max(0, max - 1);
  // Never between the two halves of a character outside the BMP (an emoji): a lone half shows as �.
  if (end > 0 && /[\ud800-\udbff]/.test(flat[end - 1]!)) end--;
  return `${flat.slice(0, end)}…`;
}

/** Input keys that best name what a tool call did, most telling first. */
const TELLING_KEYS = ['command', 'cmd', 'pattern', 'query', 'file_path', 'filePath', 'path', 'url', 'prompt', 'description'];

/** A tool call's input as one short line: `npm test`, `src/a.ts`, `{"k":1}`; '' when it says nothing. */
export function compactArgs(input: unknown, max = 200): string {
  if (input === undefined || input === null) return '';
  let text: string;
  if (typeof input === 'string') text = input;
  else if (typeof input === 'object' && !Array.isArray(input)) {
    const record = input as Record<string, unknown>;
    const key = TELLING_KEYS.find((k) => typeof record[k] === 'string' && (record[k] as string).trim() !== '');
    text = key ? (record[key] as string) : jsonText(input);
  } else text = jsonText(input);
  const line = truncate(text, max);
  // A copy, so a (possibly huge) tool input string is not kept alive by a slice of it.
  return line === '{}' ? '' : (' ' + line).slice(1);
}
