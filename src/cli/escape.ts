// Terminal-safe text: what main.ts needs before any command loads, apart from format.ts (which loads the catalog).

/**
 * Control characters (C0 but tab, DEL, C1), bidirectional overrides and line
 * separators: what a file name, title or blob line could use to drive the
 * terminal (clear the screen, colour, OSC 8 links, a fake line of output).
 */
const UNSAFE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every unsafe character shown as an escape (`\x1b`, `\n`, `\u202e`) instead of acting on the terminal. */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Template tag for human output: every interpolated value is escaped (escapeControls), the template itself is not. */
export function human(strings: TemplateStringsArray, ...values: unknown[]): string {
  return strings.reduce((out, s, i) => out + s + (i < values.length ? escapeControls(String(values[i])) : ''), '');
}
