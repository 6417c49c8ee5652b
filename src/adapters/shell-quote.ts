/** Quote a string for a POSIX shell (left bare when it holds nothing a shell would read specially). */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * ANSI-C quoting (`$'...'`, bash and zsh): the text's newlines become `\n`, so
 * a copy of a command adds no line to what bash counts (its messages say `line N`).
 */
export function ansiCQuote(text: string): string {
  let out = "$'";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === "'") out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}
