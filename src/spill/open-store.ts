// The one place a spill store is chosen, from configuration: adapters and the CLI open their store here and
// never construct one themselves, so another store kind is added here alone.
import { LocalSpillStore, type LocalSpillStoreOptions } from './local-store';
import { isS3Url } from './remote/s3-location';

/** The store kinds SPILLWAY_STORE may name. */
export const STORE_KINDS = ['local'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

export interface SpillStoreConfig extends LocalSpillStoreOptions {
  /** Read for SPILLWAY_STORE (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
}

/** The kind SPILLWAY_STORE names; an unknown one is reported and the local store used (an output is never lost to a typo). */
export function storeKind(config: SpillStoreConfig = {}): StoreKind {
  const asked = (config.env ?? process.env).SPILLWAY_STORE?.trim() || 'local';
  // An s3:// location keeps the local store and adds a copy in the bucket (remote/configured.ts).
  if (isS3Url(asked)) return 'local';
  const known = STORE_KINDS.find((kind) => kind === asked);
  if (!known) config.logger?.warn(`SPILLWAY_STORE=${asked} is not a store kind (${STORE_KINDS.join(', ')}): using the local store`);
  return known ?? 'local';
}

/**
 * The store this configuration asks for. Today every kind is the local store, whose callers also use what only
 * a local folder has (a file path the Bash capture writes into, agent-written files recorded in place).
 */
export function openSpillStore(config: SpillStoreConfig = {}): LocalSpillStore {
  const { env: _env, ...options } = config;
  storeKind(config);
  return new LocalSpillStore(options);
}
