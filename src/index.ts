// The library API: the spill engine and the agent adapters.
export * from './spill/types';
export * from './spill/manifest';
export * from './spill/local-store';
export * from './spill/digest';
export * from './spill/policy';
export * from './spill/budget';
export { classifyOutput, parseValueBlob, renderValueBlob, planValueDigest, formatJsonPath, type OutputClass, type StringLeaf, type ValuePlan, type JsonPath } from './spill/value';
export { countLines, utf8Bytes } from './spill/text';
// The catalog (reader side): sessions -> blobs, slice, grep, clean, turns.
export * from './catalog/types';
export { Catalog } from './catalog/catalog';
