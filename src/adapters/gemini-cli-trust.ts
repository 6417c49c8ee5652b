// Records a project hook as trusted in Gemini CLI's own list
// (`~/.gemini/trusted_hooks.json`: project root -> ["<name>:<command>", ...]),
// what Gemini CLI itself writes after warning about a new project hook. Done
// only when the user asks for it (`--trust`).
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { replaceFile } from './replace-file';

export async function trustGeminiHook(env: NodeJS.ProcessEnv, projectRoot: string, name: string, command: string): Promise<string> {
  const home = env.GEMINI_CLI_HOME?.trim() || env.HOME?.trim() || os.homedir();
  const file = path.join(home, '.gemini', 'trusted_hooks.json');
  let trusted: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(await fsp.readFile(file, 'utf8'));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${file} does not hold a JSON object; nothing was changed`);
    trusted = value as Record<string, unknown>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = `${name}:${command}`;
  const list = Array.isArray(trusted[projectRoot]) ? (trusted[projectRoot] as unknown[]) : [];
  if (list.includes(key)) return `already trusted for ${projectRoot} in ${file}`;
  trusted[projectRoot] = [...list, key];
  await replaceFile(file, JSON.stringify(trusted, null, 2));
  return `recorded the hook as trusted for ${projectRoot} in ${file}`;
}
