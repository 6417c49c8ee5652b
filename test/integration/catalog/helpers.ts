// Shared by the catalog integration tests: the built CLI as a child process.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';

export const REPO = path.resolve(__dirname, '../../..');
export const CLI = path.join(REPO, 'dist', 'cli.js');

/** `npm run build` output is required; build it once when a test run starts without it. */
export function ensureBuilt(): void {
  if (!existsSync(CLI)) execFileSync(process.execPath, ['esbuild.mjs'], { cwd: REPO, stdio: 'ignore' });
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
