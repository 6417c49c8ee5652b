// The library API: the spill engine and the agent adapters.
export * from './spill/types';
export * from './spill/manifest';
