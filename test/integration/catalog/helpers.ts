// Shared by the catalog integration tests: the built CLI as a child process,
// aged fixture trees, and sessions as `list` shows them.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { SessionInfo } from '../../../src/catalog/types';

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

/** Files written a moment ago cannot prove they are unchanged (timestamp granularity): age the whole tree. */
export async function backdate(root: string, seconds = 3600): Promise<void> {
  const when = new Date(Date.now() - seconds * 1000);
  const visit = async (p: string): Promise<void> => {
    const stat = await fsp.lstat(p);
    if (stat.isSymbolicLink()) return;
    if (stat.isDirectory()) for (const name of await fsp.readdir(p)) await visit(path.join(p, name));
    await fsp.utimes(p, when, when);
  };
  await visit(root);
}

/** What list shows of the sessions (lazily read facts left out). */
export function shown(sessions: SessionInfo[]): unknown {
  return sessions.map((s) => ({ ...s, blobs: s.blobs.map(({ preview: _p, binary: _b, lines: _l, ...b }) => b) }));
}
