// The one place a spill store is chosen, from configuration: adapters and the CLI open their store here and
// never construct one themselves, so another store kind is added here alone. `SPILLWAY_STORE=s3://BUCKET/PREFIX`
// (or a `--store` flag) keeps the local store and adds a durable copy in the bucket (remote/mirrored-store.ts).
import { LocalSpillStore, type LocalSpillStoreOptions } from './local-store';
import { MirroredSpillStore } from './remote/mirrored-store';
import { isS3Url, parseS3Url } from './remote/s3-location';
import { uploadQueueDir } from './remote/upload-queue';

/** The store kinds SPILLWAY_STORE may name besides an s3:// location. */
export const STORE_KINDS = ['local'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

export interface SpillStoreConfig extends LocalSpillStoreOptions {
  /** Read for SPILLWAY_STORE and the upload queue (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
  /** The agent a bucket's keys file blobs under (`claude-code`, `pi`, `spillway`); default `spillway`. */
  agent?: string;
  /** An explicit location (a `--store` flag): it must be a valid s3:// location, else this throws. */
  store?: string;
}

/** The kind SPILLWAY_STORE names; an unknown one is reported and the local store used (an output is never lost to a typo). */
export function storeKind(config: SpillStoreConfig = {}): StoreKind {
  const asked = (config.env ?? process.env).SPILLWAY_STORE?.trim() || 'local';
  if (isS3Url(asked)) return 'local';
  const known = STORE_KINDS.find((kind) => kind === asked);
  if (!known) config.logger?.warn(`SPILLWAY_STORE=${asked} is not a store kind (${STORE_KINDS.join(', ')}): using the local store`);
  return known ?? 'local';
}

/**
 * The store this configuration asks for: the local store, mirrored to the bucket `store` or SPILLWAY_STORE names.
 * Both are a LocalSpillStore, whose callers also use what only a local folder has (a file path the Bash capture
 * writes into, agent-written files recorded in place). A location from the environment that is not valid is
 * reported and the spill stays local; an explicit `store` that is not valid throws.
 */
export function openSpillStore(config: SpillStoreConfig = {}): LocalSpillStore {
  const { env: givenEnv, agent, store: setting, ...options } = config;
  const env = givenEnv ?? process.env;
  if (setting !== undefined && !isS3Url(setting)) throw new Error(`--store must be an s3://BUCKET/PREFIX location, got '${setting}'`);
  const fromEnv = env.SPILLWAY_STORE?.trim();
  const where = setting ?? (isS3Url(fromEnv) ? fromEnv : undefined);
  if (where === undefined) {
    storeKind({ ...config, env });
    return new LocalSpillStore(options);
  }
  let location;
  try {
    location = parseS3Url(where);
  } catch (err) {
    if (setting !== undefined) throw err;
    config.logger?.warn(`SPILLWAY_STORE: ${(err as Error).message}; spilling locally only`);
    return new LocalSpillStore(options);
  }
  return new MirroredSpillStore({ ...options, location, agent: agent ?? 'spillway', queueDir: uploadQueueDir(env) });
}

/** Whether this store queues copies for a bucket. */
export function isMirrored(store: LocalSpillStore): store is MirroredSpillStore {
  return store instanceof MirroredSpillStore;
}
