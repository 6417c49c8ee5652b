// Which names are Spillway's own bookkeeping (src/spill/internal-files.ts), apart from the code that makes them so
// that the catalog does not load `node:crypto` with it at every command's start.
import { MANIFEST_NAME } from './manifest';

/** The manifest and every hidden `.spillway*` file: never listed as blobs. */
export function isInternalName(name: string): boolean {
  return name === MANIFEST_NAME || name.startsWith('.spillway');
}

/** Whether `name` is a blob temp (`.spillway-tmp-*`: a spill being written, or one a killed spill left). */
export function isTempName(name: string): boolean {
  return name.startsWith('.spillway-tmp-');
}
