// The settings.json `env` entries of the Bash capture: CLAUDE_CODE_SHELL_PREFIX
// pointing at Spillway's shell script, and the user's own prefix, if there was
// one, kept in SPILLWAY_CHAINED_SHELL_PREFIX: the script runs it in turn, and
// uninstall puts it back.
import * as path from 'node:path';
import { shellQuote } from './shell-quote';

export const SHELL_PREFIX_VAR = 'CLAUDE_CODE_SHELL_PREFIX';
export const CHAINED_PREFIX_VAR = 'SPILLWAY_CHAINED_SHELL_PREFIX';
export const PREFIX_SCRIPT_NAME = 'claude-code-prefix.sh';

/** Recognises Spillway's prefix whatever folder and Node it names. */
const OUR_PREFIX = /(?:^|\/)claude-code-prefix\.sh -s "\$0" \S/;

export function isSpillwayPrefix(value: unknown): boolean {
  return typeof value === 'string' && OUR_PREFIX.test(value);
}

/**
 * The prefix value. Claude Code splits a prefix at its last " -": the part before is quoted as one word (the
 * script's path, as is), the part after is shell text its outer shell expands (`"$0"`: that shell's own path).
 */
export function shellPrefixValue(script: string, nodePath: string = process.execPath): string {
  const node = shellQuote(nodePath);
  if (node.includes(' -')) throw new Error(`cannot name this Node in a shell prefix (its path holds " -"): ${nodePath}`);
  return `${path.resolve(script)} -s "$0" ${node}`;
}

type Env = Record<string, unknown>;

/** Sets Spillway's prefix in `settings.env`, chaining a prefix the user had; returns what changed, one line each. */
export function addShellPrefix(settings: Record<string, unknown>, prefix: string): string[] {
  const env = envOf(settings, true)!;
  const current = env[SHELL_PREFIX_VAR];
  if (current === prefix) return [];
  const changes: string[] = [];
  if (typeof current === 'string' && current !== '' && !isSpillwayPrefix(current)) {
    env[CHAINED_PREFIX_VAR] = current;
    changes.push(`kept your shell prefix in env.${CHAINED_PREFIX_VAR} (Spillway's runs it): ${current}`);
  }
  env[SHELL_PREFIX_VAR] = prefix;
  changes.push(`${current === undefined ? 'set' : 'replaced'} env.${SHELL_PREFIX_VAR}: ${prefix}`);
  return changes;
}

/** Takes Spillway's prefix out of `settings.env` (the user's own goes back); returns what changed. */
export function removeShellPrefix(settings: Record<string, unknown>): string[] {
  const env = envOf(settings, false);
  if (!env || !isSpillwayPrefix(env[SHELL_PREFIX_VAR])) return [];
  const chained = env[CHAINED_PREFIX_VAR];
  delete env[CHAINED_PREFIX_VAR];
  const changes: string[] = [];
  if (typeof chained === 'string' && chained !== '') {
    env[SHELL_PREFIX_VAR] = chained;
    changes.push(`restored your env.${SHELL_PREFIX_VAR}: ${chained}`);
  } else {
    delete env[SHELL_PREFIX_VAR];
    changes.push(`removed env.${SHELL_PREFIX_VAR}`);
  }
  if (Object.keys(env).length === 0) delete settings.env;
  return changes;
}

function envOf(settings: Record<string, unknown>, create: boolean): Env | undefined {
  const env = settings.env;
  if (env === undefined) {
    if (!create) return undefined;
    settings.env = {};
    return settings.env as Env;
  }
  if (typeof env !== 'object' || env === null || Array.isArray(env)) throw new Error('"env" is not an object; nothing was changed');
  return env as Env;
}
