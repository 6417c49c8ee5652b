// Reads the user's command back out of the string Claude Code hands its shell
// prefix (`source <snapshot> && ... && eval '<command>' < /dev/null && pwd -P >| <file>`),
// for the manifest's label. Only a label: when the string has another shape the
// whole string is returned.

/** The command inside Claude Code's `eval <word>`, or the whole string when there is none. */
export function commandOfShellString(shellString: string): string {
  const at = /(?:&&|\{)\s*eval\s+/.exec(shellString);
  if (!at) return shellString;
  return readShellWord(shellString, at.index + at[0].length) ?? shellString;
}

/** One shell word starting at `start` (quotes and backslashes removed), or undefined if it does not end. */
export function readShellWord(text: string, start: number): string | undefined {
  let out = '';
  let i = start;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/.test(ch) || ch === ';' || ch === '&' || ch === '|' || ch === '<' || ch === '>') break;
    if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) return undefined;
      out += text.slice(i + 1, end);
      i = end + 1;
    } else if (ch === '"') {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length && '$`"\\\n'.includes(text[i + 1]!)) i++;
        out += text[i];
        i++;
      }
      if (i >= text.length) return undefined;
      i++;
    } else if (ch === '\\') {
      out += text[i + 1] ?? '';
      i += 2;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}
