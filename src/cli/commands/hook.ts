// `spillway hook claude-code`: the Claude Code command hook itself (stdin ->
// stdout; PostToolUse and Stop), plus `hook install|uninstall claude-code` (the hook and
// the shell prefix that captures Bash output).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runClaudeCodeHook } from '../../adapters/claude-code-hook';
import {
  claudeSettingsPath,
  defaultHookCommand,
  installClaudeCodeHook,
  uninstallClaudeCodeHook,
} from '../../adapters/settings-install';
import { PREFIX_SCRIPT_NAME, shellPrefixValue } from '../../adapters/claude-code-prefix-install';
import { CODEX_HELP, codexHookCommand, codexInstallCommand } from '../codex-hook-command';
import { GEMINI_HOOK_HELP, geminiCliHookCommand, geminiInstallCommand } from '../hook-gemini-cli';
import { runOpencodeInstall } from '../hook-install-opencode';
import { readAll, UsageError, type CliCommand, type CliIO } from '../io';
import { parseInstallFlags } from '../install-flags';

const HELP = `usage:
  spillway hook claude-code
      Claude Code hook (PostToolUse, Stop): reads the event on stdin, prints the
      hook's answer (or nothing; always nothing at Stop) on stdout. Never
      fails the tool call.
  spillway hook install claude-code [--user | --project DIR] [--command CMD]
      Add the hooks (PostToolUse, Stop) and the Bash shell prefix (env.CLAUDE_CODE_SHELL_PREFIX;
      a prefix already there is kept and run by Spillway's) to
      ~/.claude/settings.json ($CLAUDE_CONFIG_DIR respected) or to
      DIR/.claude/settings.json. Idempotent; upgrades an older install.
      --command replaces the default "<node> <package>/dist/hook.js claude-code".
  spillway hook uninstall claude-code [--user | --project DIR]
      Remove them again (the file as it was, when nothing else changed).
${CODEX_HELP}${GEMINI_HOOK_HELP}  spillway hook install|uninstall opencode [--user | --project DIR] [--plugin FILE]
      Add or remove Spillway's plugin in opencode.json(c)'s "plugin" list
      (~/.config/opencode or DIR), as text: uninstall restores the file byte for byte.
`;

export const hookCommand: CliCommand = async (argv, io) => {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h') {
    io.stdout(HELP);
    return first === undefined ? 2 : 0;
  }
  if (first === 'claude-code') return runHook(io);
  if (first === 'codex') return codexHookCommand(rest, io);
  if (first === 'gemini-cli') return geminiCliHookCommand(io);
  if (first === 'install' || first === 'uninstall') return runInstall(first, rest, io);
  throw new UsageError(`unknown subcommand '${first}' (try --help)`);
};

/** Whatever happens, exit 0: a failing hook must never turn into a failed tool call. */
async function runHook(io: CliIO): Promise<number> {
  await runClaudeCodeHook((await readAll(io.stdin())).toString('utf8'), io.env, io);
  return 0;
}

async function runInstall(action: 'install' | 'uninstall', argv: string[], io: CliIO): Promise<number> {
  const [agent, ...flags] = argv;
  if (agent === 'codex') return codexInstallCommand(action, flags, io);
  if (agent === 'opencode') return runOpencodeInstall(action, flags, io);
  if (agent === 'gemini-cli') return geminiInstallCommand(action, flags, io);
  if (agent !== 'claude-code') throw new UsageError(`${action}: one of claude-code, codex, gemini-cli, opencode (got ${agent ?? 'nothing'})`);
  const { scope, value: command } = parseInstallFlags(action, flags, { value: { flag: '--command', what: 'a command line' } });
  const settingsPath = claudeSettingsPath(scope, io.env);
  const result =
    action === 'install'
      ? await installClaudeCodeHook(settingsPath, command ?? defaultHookCommand(hookScriptPath()), shellPrefix(io))
      : await uninstallClaudeCodeHook(settingsPath);
  for (const line of result.changes) io.stdout(`${line}\n`);
  if (result.changed) {
    io.stdout(`wrote ${result.settingsPath}\n`);
    if (result.backupPath) io.stdout(`backup of the previous file: ${result.backupPath}\n`);
  }
  return 0;
}

/** The shell prefix beside the running dist/cli.js (with dist/hook.js, which it starts for a large output). */
function shellPrefix(io: CliIO): string | undefined {
  const cli = require.main?.filename ?? process.argv[1];
  const script = cli ? path.join(path.dirname(cli), PREFIX_SCRIPT_NAME) : undefined;
  if (!script || !fs.existsSync(script) || !fs.existsSync(path.join(path.dirname(script), 'hook.js'))) {
    io.stderr(`spillway: ${PREFIX_SCRIPT_NAME} or hook.js not found beside the CLI; Bash output will not be captured\n`);
    return undefined;
  }
  return shellPrefixValue(script);
}

/**
 * dist/hook.js beside the running dist/cli.js (the lean hook entry); the CLI
 * itself when that file is missing (a custom build).
 */
function hookScriptPath(): string {
  const cli = require.main?.filename ?? process.argv[1];
  if (!cli) throw new Error('cannot tell where the spillway CLI is; pass --command');
  const lean = path.join(path.dirname(cli), 'hook.js');
  return fs.existsSync(lean) ? lean : cli;
}
