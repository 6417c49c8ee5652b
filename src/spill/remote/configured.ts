// `SPILLWAY_STORE=s3://BUCKET/PREFIX` (or `--store`): the one place that turns
// the configuration into a store. Unset: the local store alone.
import { spawn } from 'node:child_process';
import type { LocalSpillStore } from '../local-store';
import { MirroredSpillStore } from './mirrored-store';
import { isS3Url, parseS3Url } from './s3-location';
import { uploadQueueDir } from './upload-queue';

export interface StoreChoice {
  store: LocalSpillStore | MirroredSpillStore;
  mirror?: MirroredSpillStore;
}

/**
 * The local store, mirrored to the object store `setting` (a --store flag) names, else `SPILLWAY_STORE` when that
 * is an s3:// location (other values are open-store.ts's to judge: an output is never lost to a typo there). A
 * flag that is not an s3:// location, or a location that is not valid, throws.
 */
export function chooseStore(local: LocalSpillStore, agent: string, setting: string | undefined, env: NodeJS.ProcessEnv = process.env, warn?: (m: string) => void): StoreChoice {
  if (setting !== undefined && !isS3Url(setting)) throw new Error(`--store must be an s3://BUCKET/PREFIX location, got '${setting}'`);
  const where = setting ?? (isS3Url(env.SPILLWAY_STORE?.trim()) ? env.SPILLWAY_STORE!.trim() : undefined);
  if (!where) return { store: local };
  let location;
  try {
    location = parseS3Url(where);
  } catch (err) {
    if (setting !== undefined) throw err;
    // From the environment: the spill goes on locally, and says why there is no copy.
    warn?.(`SPILLWAY_STORE: ${(err as Error).message}; spilling locally only`);
    return { store: local };
  }
  const mirror = new MirroredSpillStore({ local, location, agent, queueDir: uploadQueueDir(env), ...(warn ? { warn } : {}) });
  return { store: mirror, mirror };
}

/**
 * Starts `node CLI upload` detached from this process (its own session, no stdio): it outlives a hook or
 * command that returns at once, and drains everything queued, this run's copies and any an earlier run left.
 */
export function startUploader(cliPath: string, env: NodeJS.ProcessEnv = process.env): void {
  try {
    const child = spawn(process.execPath, [cliPath, 'upload', '--quiet'], { detached: true, stdio: 'ignore', env });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // The queue keeps the copies for the next run.
  }
}
