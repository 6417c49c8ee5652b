// `spillway hook codex ...` and `spillway hook install|uninstall codex`: the
// Codex CLI's part of the hook command (src/cli/commands/hook.ts dispatches here).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCodexFinish, runCodexHook } from '../adapters/codex-capture';
import { processPipeDigestIo, runCodexPipeDigest } from '../adapters/codex-pipe-digest';
import { codexHome, codexHooksPath, defaultCodexHookCommand, installCodexHook, uninstallCodexHook } from '../adapters/codex-install';
import { readAll, type CliIO } from './io';
import { parseInstallFlags } from './install-flags';

export const CODEX_HELP = `  spillway hook codex
      Codex CLI PreToolUse, PostToolUse and Stop hook: reads the event on
      stdin, moves the session's finished captures to $CODEX_HOME/spillway/,
      and prints the rewrite of a shell command (or nothing). Never fails the call.
  spillway hook codex finish DIGEST_BYTES FILE FINAL STATUS COMMAND
      The step a captured command runs when it ends (written by the hook).
  spillway hook codex digest INLINE_BYTES DIGEST_BYTES
      Where no capture file can be made (a read-only sandbox): digests the
      output on stdin, its exit status coming on fd 3 (written by the hook).
  spillway hook install codex [--user | --project DIR] [--command CMD] [--trust]
      Add the hooks to $CODEX_HOME/hooks.json (~/.codex) or DIR/.codex/hooks.json.
      --trust also records Codex's trust for them in $CODEX_HOME/config.toml
      (without it, Codex asks you to review the hook first).
  spillway hook uninstall codex [--user | --project DIR]
      Remove the hook and the trust record again (files restored byte for byte).
`;

export async function codexHookCommand(rest: string[], io: CliIO): Promise<number> {
  if (rest[0] === 'finish') return runCodexFinish(rest.slice(1), io);
  // Reads the process's own stdin and fd 3 (the wrapper's pipes), not the CLI's io.
  if (rest[0] === 'digest') return runCodexPipeDigest(rest.slice(1), processPipeDigestIo);
  const cli = require.main?.filename ?? process.argv[1];
  // Whatever happens, exit 0: a failing hook must never turn into a failed tool call.
  await runCodexHook((await readAll(io.stdin())).toString('utf8'), io.env, io, { script: cli ?? '', viaCli: true });
  return 0;
}

export async function codexInstallCommand(action: 'install' | 'uninstall', flags: string[], io: CliIO): Promise<number> {
  const { scope, value: command, trust } = parseInstallFlags(action, flags, { value: { flag: '--command', what: 'a command line' }, trust: true });
  const hooksPath = codexHooksPath(scope, io.env);
  const configPath = path.join(codexHome(io.env), 'config.toml');
  const result =
    action === 'install'
      ? await installCodexHook(hooksPath, command ?? defaultCodexHookCommand(leanHookScript()), { trust, configPath })
      : await uninstallCodexHook(hooksPath, configPath);
  for (const line of result.changes) io.stdout(`${line}\n`);
  return 0;
}

/** dist/codex-hook.js beside the running dist/cli.js; the CLI itself when that file is missing (a custom build). */
function leanHookScript(): string {
  const cli = require.main?.filename ?? process.argv[1];
  if (!cli) throw new Error('cannot tell where the spillway CLI is; pass --command');
  const lean = path.join(path.dirname(cli), 'codex-hook.js');
  return fs.existsSync(lean) ? lean : cli;
}
