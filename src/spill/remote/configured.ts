// After a hook, an adapter or `spillway spill` has handed the agent its result: the copies queued for a bucket
// go up in a process of their own (`spillway upload`, detached), so the agent never waits on the network.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { isS3Url } from './s3-location';
import { pendingNames, uploadQueueDir } from './upload-queue';

/**
 * The built CLI (`cli.js` beside `cli-upload.js`), looked for from this bundle's folder up: every bundle lies in
 * dist/ (an ES module bundle gets `__dirname` from esbuild.mjs's banner), sources run from src/ find dist/.
 * `SPILLWAY_CLI` names it outright.
 */
export function findCli(env: NodeJS.ProcessEnv = process.env, from: string | undefined = typeof __dirname === 'string' ? __dirname : undefined): string | undefined {
  if (env.SPILLWAY_CLI && existsSync(env.SPILLWAY_CLI)) return path.resolve(env.SPILLWAY_CLI);
  for (let dir = from; dir !== undefined; ) {
    for (const folder of [dir, path.join(dir, 'dist')]) {
      if (existsSync(path.join(folder, 'cli.js')) && existsSync(path.join(folder, 'cli-upload.js'))) return path.join(folder, 'cli.js');
    }
    const up = path.dirname(dir);
    dir = up === dir ? undefined : up;
  }
  return undefined;
}

/**
 * Starts `node CLI upload` detached from this process (its own session, no stdio): it outlives a hook or
 * command that returns at once, and drains everything queued, this run's copies and any an earlier run left.
 */
export function startUploader(cliPath: string, env: NodeJS.ProcessEnv = process.env): void {
  try {
    // An agent on another runtime (opencode's Bun) starts Node from PATH: the CLI is a Node program.
    const node = /^node(\.exe)?$/.test(path.basename(process.execPath)) ? process.execPath : 'node';
    const child = spawn(node, [cliPath, 'upload', '--quiet'], { detached: true, stdio: 'ignore', env });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // The queue keeps the copies for the next run.
  }
}

/**
 * Starts an uploader when a bucket is configured (or `force`: a `--store` flag) and anything is queued. Never
 * throws and never waits on the network: a queue left behind is drained by the next run.
 */
export async function uploadQueuedInBackground(env: NodeJS.ProcessEnv = process.env, force = false): Promise<void> {
  try {
    if (!force && !isS3Url(env.SPILLWAY_STORE?.trim())) return;
    if ((await pendingNames(uploadQueueDir(env))).length === 0) return;
    const cli = findCli(env);
    if (cli) startUploader(cli, env);
  } catch {
    // The queue keeps the copies for the next run.
  }
}
