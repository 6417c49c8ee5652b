// The library API: the spill engine and the agent adapters.
export * from './spill/types';
export * from './spill/manifest';
// The catalog (reader side): sessions -> blobs, slice, grep, clean, turns.
export * from './catalog/types';
export { Catalog } from './catalog/catalog';
