// What a command wrapper needs to know of the shell that will run it: which
// shell, whether it parses a command cleanly, and where its standard tools are.
import { spawnSync } from 'node:child_process';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import * as path from 'node:path';
import { shellQuote } from './shell-quote';

/** The shell commands run in, as far as this process can tell (SHELL when it is bash or zsh; else bash). */
export function commandShell(env: NodeJS.ProcessEnv = process.env): string {
  const shell = env.SHELL;
  return shell && /^(?:bash|zsh)$/.test(path.basename(shell)) ? shell : 'bash';
}

/**
 * Why `shell` would not parse the command cleanly (a syntax error, a heredoc left open), or undefined when
 * it does. A wrapper runs the command after its prologue: a syntax error there would stop the prologue too,
 * so such a command runs as typed and fails as it always did.
 */
export function whyShellRejects(command: string, shell: string = commandShell()): string | undefined {
  const check = spawnSync(shell, ['-n', '-c', command], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000, encoding: 'utf8' });
  if (check.error) return `cannot check the command with ${shell}: ${check.error.message}`;
  if (check.status !== 0 || check.stderr !== '') return `${path.basename(shell)} does not parse the command cleanly`;
  return undefined;
}

/**
 * How a wrapper runs a standard tool once the command is done (the command may have set PATH, or defined a
 * function of that name): by the absolute path found on this process's PATH when the command is wrapped,
 * else through `command -p` (the system's default PATH).
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
