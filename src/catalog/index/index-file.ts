// The persistent catalog index: what each claimed session was described as,
// with the stamps (inode, size, mtime) of every folder and file the
// description read. A later process reuses a description whose stamps all
// still hold and re-describes the rest, so unchanged transcripts are never
// parsed again. The file is only a cache: missing, corrupt or from another
// version, it is ignored and rewritten; several processes may write it, each
// to a temporary file renamed into place (the last complete one wins).

export type { CheckedClaim, IndexedClaim } from './claims';
export { defaultCacheDir, indexFileFor } from './files';
export { encodeEntry, lastUpdate, lineStillHolds } from './line-codec';
export { IndexReader, loadIndex } from './reader';
export { blobsUnchanged, blobUnchanged, stampHolds, stampsHold, UNSETTLED } from './stamps';
export { stampFrom, stampOf } from '../shared/stamp';
export { INDEX_VERSION } from './trailer';
export type { IndexHeader, LineSpans, LoadedIndex, StoredListing, WalkHeader, WalkListing } from './trailer';
export { IndexWriteError, IndexWriter, saveIndex } from './writer';

