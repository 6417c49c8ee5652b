// Codex's command rules (`rules/*.rules`, a Starlark file of `prefix_rule(...)`
// calls), read so that Spillway never rewrites a command those rules forbid or
// would prompt for: Codex judges the command it runs, and once rewritten that
// is Spillway's wrapper, whose words name no rule. Only the subset of Starlark
// that rule files use is understood (calls of the three builtins with string
// and list arguments, comments); a file outside it is "not understood", and
// then no command is rewritten at all, so Codex judges every command as typed.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';

export type RuleDecision = 'allow' | 'prompt' | 'forbidden';

export interface PrefixRule {
  /** Each position's alternatives; the first is matched against the program's name. */
  pattern: string[][];
  decision: RuleDecision;
}

export type RulesRead = { ok: true; rules: PrefixRule[]; files: string[] } | { ok: false; why: string };

type Value = { kind: 'string'; text: string } | { kind: 'list'; items: Value[] };
type Token = { kind: 'ident' | 'string' | 'punct'; text: string };

/** The folders of each config layer Codex reads rules from: `/etc/codex`, `$CODEX_HOME`, and every `.codex` from the root down to `cwd`. */
export function codexRuleFolders(codexHome: string, cwd: string | undefined): string[] {
  const folders = ['/etc/codex', codexHome];
  if (cwd && path.isAbsolute(cwd)) {
    const chain: string[] = [];
    for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
      chain.unshift(path.join(dir, '.codex'));
      if (path.dirname(dir) === dir) break;
    }
    folders.push(...chain);
  }
  return [...new Set(folders.map((f) => path.join(f, 'rules')))];
}

/** Every `*.rules` file of these folders, parsed; the first file that cannot be read or understood makes the whole read fail. */
export async function readCodexRules(ruleDirs: string[]): Promise<RulesRead> {
  const rules: PrefixRule[] = [];
  const files: string[] = [];
  for (const dir of ruleDirs) {
    let names: string[];
    try {
      names = (await fsp.readdir(dir)).filter((n) => n.endsWith('.rules')).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      return { ok: false, why: `cannot read ${dir}: ${(err as Error).message}` };
    }
    for (const name of names) {
      const file = path.join(dir, name);
      let text: string;
      try {
        text = await fsp.readFile(file, 'utf8');
      } catch (err) {
        return { ok: false, why: `cannot read ${file}: ${(err as Error).message}` };
      }
      const parsed = parseRules(text);
      if (!parsed.ok) return { ok: false, why: `${file}: ${parsed.why}` };
      rules.push(...parsed.rules);
      files.push(file);
    }
  }
  return { ok: true, rules, files };
}

/** One rules file's `prefix_rule`s, or why it is outside the understood subset. */
export function parseRules(text: string): { ok: true; rules: PrefixRule[] } | { ok: false; why: string } {
  let tokens: Token[];
  try {
    tokens = tokenize(text);
  } catch (err) {
    return { ok: false, why: (err as Error).message };
  }
  const rules: PrefixRule[] = [];
  let i = 0;
  const next = (): Token | undefined => tokens[i++];
  const expect = (text: string): void => {
    const t = next();
    if (t?.kind !== 'punct' || t.text !== text) throw new Error(`expected '${text}', found ${t ? `'${t.text}'` : 'the end'}`);
  };
  const value = (): Value => {
    const t = next();
    if (t?.kind === 'string') return { kind: 'string', text: t.text };
    if (t?.kind === 'punct' && t.text === '[') {
      const items: Value[] = [];
      while (!(tokens[i]?.kind === 'punct' && tokens[i]!.text === ']')) {
        items.push(value());
        if (tokens[i]?.kind === 'punct' && tokens[i]!.text === ',') i++;
        else break;
      }
      expect(']');
      return { kind: 'list', items };
    }
    throw new Error(`a value must be a string or a list, found ${t ? `'${t.text}'` : 'the end'}`);
  };
  try {
    while (i < tokens.length) {
      const fn = next()!;
      if (fn.kind !== 'ident' || !(fn.text in SIGNATURES)) throw new Error(`not understood: '${fn.text}' (only ${Object.keys(SIGNATURES).join(', ')} calls)`);
      expect('(');
      const params = SIGNATURES[fn.text]!;
      const args = new Map<string, Value>();
      let positional = 0;
      while (!(tokens[i]?.kind === 'punct' && tokens[i]!.text === ')')) {
        let name: string;
        if (tokens[i]?.kind === 'ident' && tokens[i + 1]?.kind === 'punct' && tokens[i + 1]!.text === '=') {
          name = tokens[i]!.text;
          i += 2;
          if (!params.includes(name)) throw new Error(`${fn.text}: unknown argument '${name}'`);
        } else {
          name = params[positional++] ?? '';
          if (!name) throw new Error(`${fn.text}: too many arguments`);
        }
        if (args.has(name)) throw new Error(`${fn.text}: '${name}' given twice`);
        args.set(name, value());
        if (tokens[i]?.kind === 'punct' && tokens[i]!.text === ',') i++;
        else break;
      }
      expect(')');
      if (fn.text === 'prefix_rule') rules.push(prefixRule(args));
    }
  } catch (err) {
    return { ok: false, why: (err as Error).message };
  }
  return { ok: true, rules };
}

const SIGNATURES: Record<string, string[]> = {
  prefix_rule: ['pattern', 'decision', 'match', 'not_match', 'justification'],
  network_rule: ['host', 'protocol', 'decision', 'justification'],
  host_executable: ['name', 'paths'],
};

function prefixRule(args: Map<string, Value>): PrefixRule {
  const pattern = args.get('pattern');
  if (pattern?.kind !== 'list' || pattern.items.length === 0) throw new Error('prefix_rule: pattern must be a non-empty list');
  const tokens = pattern.items.map((item) => {
    if (item.kind === 'string') return [item.text];
    const alts = item.items.map((a) => {
      if (a.kind !== 'string') throw new Error('prefix_rule: a pattern alternative must be a string');
      return a.text;
    });
    if (alts.length === 0) throw new Error('prefix_rule: pattern alternatives cannot be empty');
    return alts;
  });
  const decision = args.get('decision');
  if (decision !== undefined && decision.kind !== 'string') throw new Error('prefix_rule: decision must be a string');
  const d = decision?.text ?? 'allow';
  if (d !== 'allow' && d !== 'prompt' && d !== 'forbidden') throw new Error(`prefix_rule: unknown decision '${d}'`);
  return { pattern: tokens, decision: d };
}

const STRING_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '\n': '' };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/.test(ch)) i++;
    else if (ch === '#') while (i < text.length && text[i] !== '\n') i++;
    else if ('()[],='.includes(ch)) tokens.push({ kind: 'punct', text: text[i++]! });
    else if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))![0];
      // A prefixed string (r"", b"", f"") is outside the subset.
      if (text[i + m.length] === '"' || text[i + m.length] === "'") throw new Error(`not understood: a ${m}-prefixed string`);
      tokens.push({ kind: 'ident', text: m });
      i += m.length;
    } else if (ch === '"' || ch === "'") {
      if (text.startsWith(ch.repeat(3), i)) throw new Error('not understood: a triple-quoted string');
      let out = '';
      i++;
      for (;;) {
        const c = text[i];
        if (c === undefined || c === '\n') throw new Error('a string is not closed');
        i++;
        if (c === ch) break;
        if (c === '\\') {
          const e = text[i++];
          if (e === undefined || !(e in STRING_ESCAPES)) throw new Error(`not understood: the escape \\${e ?? ''}`);
          out += STRING_ESCAPES[e];
        } else out += c;
      }
      tokens.push({ kind: 'string', text: out });
    } else throw new Error(`not understood: '${ch}'`);
  }
  return tokens;
}

/**
 * The words a shell could make of `command`, generously: quotes and
 * backslashes dropped (so `"rm" -r'f'` is `rm -rf`), split at blanks and at
 * every operator (so words inside `$( )`, backquotes, `bash -c "..."` and
 * after `;`, `&&`, `|` are words too). Never fewer matches than Codex sees.
 */
export function looseWords(command: string): string[] {
  return command
    .replace(/\\\n/g, '')
    .replace(/['"\\]/g, '')
    .split(/[\s;&|()<>{}`$]+/)
    .filter((w) => w !== '');
}

function programName(word: string): string {
  return word.includes('/') ? path.posix.basename(word) : word;
}

/** The rule (forbidden or prompt) some run of the command's words matches, anywhere in it; undefined if none. */
export function restrictiveRuleMatch(command: string, rules: PrefixRule[]): PrefixRule | undefined {
  const words = looseWords(command);
  const restrictive = rules.filter((r) => r.decision !== 'allow');
  for (let at = 0; at < words.length; at++) {
    for (const rule of restrictive) {
      if (at + rule.pattern.length > words.length) continue;
      const [first, ...rest] = rule.pattern;
      if (!first!.some((alt) => alt === words[at] || programName(alt) === programName(words[at]!))) continue;
      if (rest.every((alts, k) => alts.includes(words[at + 1 + k]!))) return rule;
    }
  }
  return undefined;
}

/**
 * Codex's own check of a command no rule names: `rm` given a force option
 * (`-f`, `-rf`, `--force`, also under `sudo` or deep in a script) needs
 * approval, or is refused when approvals are off. Judged generously here too.
 */
export function looksLikeForcedRm(command: string): boolean {
  const words = looseWords(command);
  const rm = words.findIndex((w) => programName(w) === 'rm');
  return rm !== -1 && words.slice(rm + 1).some((w) => w === '--force' || /^-[^-]*f/.test(w));
}
