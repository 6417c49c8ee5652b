// The Bash capture: a PreToolUse rewrite of Claude Code's Bash command that
// sends the command's whole output (stdout and stderr, in order) to a private
// file while it runs, then prints either that output unchanged (small) or a
// digest naming the file (large). It runs whatever the exit code, so a failing
// build's last lines and failure lines reach the model even though Claude
// Code's own failure text is cut to ~10 KB and no later hook can recover it.
//
// How Claude Code 2.1.332 runs a command (read from its binary): one fresh
// `bash -c` per call, `source <snapshot> && ... && eval '<command>' [< /dev/null]
// && pwd -P >| <cwd file>`, stdout and stderr both into one output file. The
// wrapper keeps all of that: the user's command runs in the same shell, as
// typed (no subshell, so `cd` and everything else behaves as before), gets the
// same stdin Claude Code would have given it, and the shell exits with its status.
import { spawnSync } from 'node:child_process';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import * as path from 'node:path';

/** Every wrapped command starts with this assignment of the capture file: how the Post hooks recognise one. */
export const CAPTURE_MARKER = '__spillway_f=';

/**
 * Linux takes no single argument over 128 KiB (MAX_ARG_STRLEN): the wrapped command is one (`bash -c`, and
 * again the finish step's), so a command whose wrapper would pass it is left alone, else it would not run at all.
 */
const MAX_ARGUMENT_BYTES = 128 * 1024;
/** The wrapper around the quoted command (paths included) and Claude Code's own around that, with room to spare. */
const WRAPPER_BYTES = 8 * 1024;

/** Quote a string for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Claude Code's heredoc test (a command with one gets no `< /dev/null`). */
function hasHeredoc(command: string): boolean {
  if (/\d\s*<<\s*\d/.test(command) || /\[\[\s*\d+\s*<<\s*\d+\s*\]\]/.test(command) || /\$\(\(.*<<.*\)\)/.test(command)) return false;
  return /<<-?\s*(?:(['"]?)(\w+)\1|\\(\w+))/.test(command);
}

/** Claude Code's input-redirect test. */
function hasInputRedirect(command: string): boolean {
  return /(?:^|[\s;&|])<(?![<(])\s*\S+/.test(command);
}

/** True when Claude Code runs this command with stdin from /dev/null (it does unless the command reads a heredoc or a file). */
export function claudeStdinIsDevNull(command: string): boolean {
  return !hasHeredoc(command) && !hasInputRedirect(command);
}

/** Claude Code rewrites `>nul` (a Windows habit) to `>/dev/null` in commands without `<`, `$` or backquotes. */
export function claudeNulRewrite(command: string): string {
  if (command.includes('<') || command.includes('$') || command.includes('`')) return command;
  return command.replace(/(\d?&?>+[ \t]*)[Nn][Uu][Ll](?=\s|$|[|&;)\n])/g, '$1/dev/null');
}

/**
 * `trap` or `exec` where the shell runs it as its own builtin: at the start of a command (after a
 * separator, a keyword, `builtin`/`command`/`eval`, assignments), or right after a quote (an eval'd
 * string may run it). As another program's argument (`bundle exec`, `docker exec`, `find -exec`) it is harmless.
 */
const AT_COMMAND_START = /(?:^|[;&|(){}`\n!]|\$\(|\b(?:then|do|else|elif|if|while|until|time|builtin|command|eval)\s|['"])\s*(?:[A-Za-z_]\w*=\S*\s+)*/.source;
const SHELL_BUILTIN_USE = new RegExp(AT_COMMAND_START + /(?:trap|exec)(?![\w-])/.source);

/** `set -v` or `set -o verbose` in any form (`set -xv`, `set -euv`): the shell would echo the exit handler as it reads it. */
const VERBOSE_ON = new RegExp(AT_COMMAND_START + /set\s+(?:-[A-Za-z]*v|-o\s+verbose\b)/.source);

/**
 * Why a command is left unwrapped, or undefined when it can be wrapped.
 * `trap` could replace the wrapper's exit handler and `exec` could replace
 * the shell before the output is handed back: either would leave the model
 * with nothing; under `set -v` the shell would print the handler's text. Such
 * commands run exactly as Claude Code would run them.
 */
export function whyNotCapturable(command: string): string | undefined {
  if (command.trim() === '') return 'empty command';
  if (wrappedBytes(command) + WRAPPER_BYTES > MAX_ARGUMENT_BYTES) return 'command too long to wrap (an argument holds at most 128 KiB)';
  if (SHELL_BUILTIN_USE.test(command)) return 'command uses trap or exec';
  if (VERBOSE_ON.test(command)) return 'command turns on verbose (set -v)';
  if (command.includes('\0')) return 'command holds a NUL byte';
  return undefined;
}

export interface WrapOptions {
  /** The capture file, already created (empty, 0600) by the hook. */
  captureFile: string;
  /** Output of at most this many bytes is printed unchanged and the capture file removed. */
  inlineBytes: number;
  /** Shell words that run the finish step; it gets the capture file, the exit status and the command. */
  finishCommand: string;
}

/**
 * Bytes of the command's two copies in the wrapper (quoted for the finish step, and as typed, to run),
 * each `'` counted as a shell quoting the wrapper again would write it (`'"'"'`).
 */
function wrappedBytes(command: string): number {
  const copies = ansiCQuote(claudeNulRewrite(command)) + command;
  let quotes = 0;
  for (let i = copies.indexOf("'"); i >= 0; i = copies.indexOf("'", i + 1)) quotes++;
  return Buffer.byteLength(copies) + 4 * quotes;
}

/**
 * The shell Claude Code runs commands in, as far as this process can tell (CLAUDE_CODE_SHELL, else SHELL, when
 * it is bash or zsh; else bash), to check that it parses a command before the command is wrapped.
 */
export function commandShell(env: NodeJS.ProcessEnv = process.env): string {
  for (const shell of [env.CLAUDE_CODE_SHELL, env.SHELL]) if (shell && /^(?:bash|zsh)$/.test(path.basename(shell))) return shell;
  return 'bash';
}

/**
 * Why `shell` would not parse the command cleanly (a syntax error, a heredoc left open), or undefined when
 * it does. The wrapper runs the command after its prologue on the same line: a syntax error there would stop
 * the prologue too, so such a command runs as typed and fails as it always did.
 */
export function whyShellRejects(command: string, shell: string = commandShell()): string | undefined {
  const check = spawnSync(shell, ['-n', '-c', command], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000, encoding: 'utf8' });
  if (check.error) return `cannot check the command with ${shell}: ${check.error.message}`;
  if (check.status !== 0 || check.stderr !== '') return `${path.basename(shell)} does not parse the command cleanly`;
  return undefined;
}

/**
 * ANSI-C quoting (`$'...'`, bash and zsh): the text's newlines become `\n`, so
 * a copy of the command adds no line to what bash counts (its messages say `line N`).
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

/**
 * How the wrapper runs a standard tool once the command is done (the command may have set PATH, or defined a
 * function of that name): by the absolute path found on this process's PATH when the command is wrapped,
 * else through `command -p` (the system's default PATH, which on NixOS holds no such tool).
 */
export function wrapperTool(name: 'wc' | 'cat' | 'rm', searchPath: string = process.env.PATH ?? ''): string {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, fsConstants.X_OK);
      if (statSync(file).isFile()) return shellQuote(file);
    } catch {
      // not here: the next folder
    }
  }
  return `command -p ${name}`;
}

/**
 * The command Claude Code runs instead of `command`: a prologue, then the
 * command itself as typed, in the same shell. Its only output is the
 * command's own output (small) or the finish step's digest (large). If the
 * finish step fails, the captured output is printed whole: what the model
 * would have seen without Spillway.
 *
 * The command is written as code, not as a string to eval, because Claude
 * Code checks its permission rules (deny rules even in `bypassPermissions`
 * sessions) against the command it runs: this wrapper. A string is not read
 * (`Bash(touch:*)` denied would let `touch x` through); code is, as it would
 * have been read alone. Spillway's own steps (its `cat`, `rm`, `wc` of its own
 * file) are the other way round: defined in a string, where a rule such as
 * `Bash(rm:*)` does not read them and deny every command. Nothing follows the
 * command, so the lines bash counts (its messages say `line N`) are the
 * command's own, and a trailing comment or heredoc ends it as before; the
 * output is handed back from the EXIT trap, once Claude Code's own steps
 * after the command (its `pwd -P` into its cwd file) are done too. Only a
 * command the shell parses cleanly is wrapped (whyShellRejects): a syntax
 * error in its first line would stop the prologue as well.
 */
export function wrapBashCommand(command: string, opts: WrapOptions): string {
  const stdin = claudeStdinIsDevNull(command) ? ' </dev/null' : '';
  const inline = Math.max(0, Math.floor(opts.inlineBytes));
  const [wc, cat, rm] = (['wc', 'cat', 'rm'] as const).map((name) => wrapperTool(name));
  const done =
    // Run from the EXIT trap with $? and the command bash names as running. After the command ended by itself
    // that is a top-level one: Claude Code's eval (it failed, or `exit`), or its `pwd -P` after it (it passed).
    // A signal that ends the shell leaves a stale status (often 0) and names the simple command it interrupted:
    // that says `ended`. Where bash names no command its status is kept: zsh names none, and a bash that read a
    // startup file ending in `return` names `return` in its EXIT trap whatever ran last (Debian's
    // /etc/bash.bashrc does, read when stdin is a socket and SHLVL is unset: a Claude Code started from no shell).
    '__spillway_done() { __spillway_s=$1; ' +
    'case $2 in exit|exit[[:space:]]*|eval[[:space:]]*|pwd[[:space:]]-P*|return) ;; *) __spillway_s=ended;; esac; ' +
    'exec 1>&8 2>&9 8>&- 9>&-; ' +
    // $(( )) drops the spaces some wc put before the number. The tools by absolute path (see wrapperTool):
    // whatever PATH (or functions) the command set, they are these.
    `if [ "$(( $(${wc} -c < "$__spillway_f") ))" -le ${inline} ]; then ${cat} "$__spillway_f"; ${rm} -f "$__spillway_f"; ` +
    `else ${opts.finishCommand} "$__spillway_f" "$__spillway_s" "$__spillway_cmd" || ${cat} "$__spillway_f"; fi; }`;
  return [
    `${CAPTURE_MARKER}${ansiCQuote(opts.captureFile)}`,
    // For the finish step (the manifest's label) and the Post hooks (wrappedCommandOf).
    `__spillway_cmd=${ansiCQuote(claudeNulRewrite(command))}`,
    `eval ${ansiCQuote(done)}`,
    // Only where the file can be written: Claude Code's sandbox (bubblewrap) mounts its folder read-only, and the
    // command then runs as it would have without Spillway, its output straight to Claude Code. xtrace, if the
    // command turns it on, is turned off silently first in the trap: Spillway's steps stay out of the trace.
    `if [ -w "$__spillway_f" ] && exec 8>&1 9>&2 >>"$__spillway_f" 2>&1; then ` +
      `trap '{ __spillway_rc=$? __spillway_c=\${BASH_COMMAND-exit}; set +x; } 2>/dev/null; __spillway_done "$__spillway_rc" "$__spillway_c"' EXIT; fi`,
    // The stdin Claude Code would have given the command (`< /dev/null` on its eval, which the `<` above stops it adding here).
    ...(stdin ? [`exec${stdin}`] : []),
    claudeNulRewrite(command),
  ].join('; ');
}

/** The capture file a wrapped command names, or undefined for any other command. */
export function captureFileOf(command: unknown): string | undefined {
  if (typeof command !== 'string' || !command.startsWith(CAPTURE_MARKER)) return undefined;
  return ansiCValueAt(command, CAPTURE_MARKER.length);
}

/** The user's command inside a wrapper, or undefined for any other command. */
export function wrappedCommandOf(command: unknown): string | undefined {
  if (typeof command !== 'string' || !command.startsWith(CAPTURE_MARKER)) return undefined;
  const at = command.indexOf('; __spillway_cmd=');
  return at === -1 ? undefined : ansiCValueAt(command, at + '; __spillway_cmd='.length);
}

/** Reads back one `ansiCQuote` value starting at `at`. */
function ansiCValueAt(text: string, at: number): string | undefined {
  if (!text.startsWith("$'", at)) return undefined;
  let out = '';
  for (let i = at + 2; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "'") return out;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = text[i + 1];
    if (next === 'n') out += '\n';
    else if (next === 't') out += '\t';
    else if (next !== undefined && /[0-7]/.test(next)) {
      out += String.fromCharCode(parseInt(text.slice(i + 1, i + 4), 8));
      i += 2;
    } else out += next ?? '';
    i += 1;
  }
  return undefined;
}
