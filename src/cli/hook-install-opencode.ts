// `spillway hook install|uninstall opencode [--user | --project DIR] [--plugin FILE]`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { installOpencodePlugin, opencodeConfigPath, opencodePluginUrl, uninstallOpencodePlugin } from '../adapters/opencode-install';
import type { CliIO } from './io';
import { parseInstallFlags } from './install-flags';

export async function runOpencodeInstall(action: 'install' | 'uninstall', flags: string[], io: CliIO): Promise<number> {
  const { scope, value: plugin } = parseInstallFlags(action, flags, { value: { flag: '--plugin', what: 'a file' } });
  const configPath = opencodeConfigPath(scope, io.env);
  const result = action === 'install' ? await installOpencodePlugin(configPath, opencodePluginUrl(plugin ?? bundledPlugin())) : await uninstallOpencodePlugin(configPath);
  for (const line of result.changes) io.stdout(`${line}\n`);
  if (result.changed) io.stdout(action === 'install' ? 'opencode loads the plugin when it next starts.\n' : 'opencode stops loading the plugin when it next starts.\n');
  return 0;
}

/** dist/opencode-plugin.js beside the running dist/cli.js. */
function bundledPlugin(): string {
  const cli = require.main?.filename ?? process.argv[1];
  const file = cli ? path.join(path.dirname(cli), 'opencode-plugin.js') : undefined;
  if (!file || !fs.existsSync(file)) throw new Error('cannot find opencode-plugin.js beside the spillway CLI; pass --plugin FILE');
  return file;
}
