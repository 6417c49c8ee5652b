// `spillway hook gemini-cli` (the AfterTool and AfterAgent hooks through the full CLI) and
// `spillway hook install|uninstall gemini-cli [--user | --project DIR]`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { geminiOptionsFromEnv, handleGeminiHookInput } from '../adapters/gemini-cli-hook';
import { defaultGeminiHookCommand, GEMINI_HOOK_NAME, geminiSettingsPath, installGeminiHook, uninstallGeminiHook } from '../adapters/gemini-cli-install';
import { trustGeminiHook } from '../adapters/gemini-cli-trust';
import { uploadQueuedInBackground } from '../spill/remote/configured';
import { readAll, UsageError, type CliIO } from './io';
import { parseInstallFlags } from './install-flags';

export const GEMINI_HOOK_HELP = `  spillway hook gemini-cli
      Gemini CLI AfterTool and AfterAgent hook: reads the event on stdin,
      prints the hook's answer (or nothing) on stdout. Never fails the call.
  spillway hook install gemini-cli [--user | --project DIR] [--command CMD] [--trust]
      Add the hooks to ~/.gemini/settings.json ($GEMINI_CLI_HOME respected) or
      to DIR/.gemini/settings.json. --trust (with --project) records the hook
      as trusted for DIR in ~/.gemini/trusted_hooks.json, as Gemini CLI would
      after its first-run warning.
  spillway hook uninstall gemini-cli [--user | --project DIR]
      Remove them again; the file comes back byte for byte.
`;

/** The hook itself: reads Gemini CLI's event on stdin, prints its answer (or nothing). */
export async function geminiCliHookCommand(io: CliIO): Promise<number> {
  // Whatever happens, exit 0: a failing hook must never turn into a failed tool call.
  const line = await handleGeminiHookInput((await readAll(io.stdin())).toString('utf8'), { ...geminiOptionsFromEnv(io.env), warn: (m) => io.stderr(`spillway: ${m}\n`) });
  if (line !== undefined) io.stdout(line);
  // The answer is out: copies owed to a bucket go up in a process of their own (as dist/gemini-cli-hook.js does).
  await uploadQueuedInBackground(io.env);
  return 0;
}

/** `spillway hook install|uninstall gemini-cli FLAGS`. */
export async function geminiInstallCommand(action: 'install' | 'uninstall', flags: string[], io: CliIO): Promise<number> {
  const { scope, value: command, trust } = parseInstallFlags(action, flags, { value: { flag: '--command', what: 'a command line' }, trust: true });
  if (trust && scope.kind !== 'project') throw new UsageError('--trust is for --project DIR (Gemini CLI asks about project hooks only)');
  const settingsPath = geminiSettingsPath(scope, io.env);
  const hookCommand = command ?? defaultGeminiHookCommand(hookScriptPath());
  const result = action === 'install' ? await installGeminiHook(settingsPath, hookCommand) : await uninstallGeminiHook(settingsPath);
  for (const line of result.changes) io.stdout(`${line}\n`);
  if (result.changed && fs.existsSync(settingsPath)) io.stdout(`wrote ${settingsPath}\n`);
  if (action === 'install' && scope.kind === 'project') {
    const dir = path.resolve(scope.dir);
    if (trust) io.stdout(`${await trustGeminiHook(io.env, dir, GEMINI_HOOK_NAME, hookCommand)}\n`);
    else
      io.stdout(
        `Gemini CLI runs project hooks only in a trusted folder, and the first time it sees this one it prints a warning naming "${GEMINI_HOOK_NAME}" and trusts it from then on.\n` +
          `To trust the folder, run gemini in ${dir} and accept its folder-trust prompt; to record the hook as trusted now, run this install again with --trust.\n`,
      );
  }
  return 0;
}

/** dist/gemini-cli-hook.js beside the running dist/cli.js. */
function hookScriptPath(): string {
  const cli = require.main?.filename ?? process.argv[1];
  if (!cli) throw new Error('cannot tell where the spillway CLI is; pass --command');
  const lean = path.join(path.dirname(cli), 'gemini-cli-hook.js');
  if (!fs.existsSync(lean)) throw new Error(`${lean} is missing (build with \`npm run build\`), or pass --command`);
  return lean;
}
