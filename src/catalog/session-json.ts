// A session as `spillway list --json` prints it, still compact: its own
// fields as one object, then each blob as one object. Made when a session's
// index line is written and kept at the end of that line, so a listing prints
// a session that has not changed without parsing its description again (at
// 100,000 blobs, re-reading and rendering every description was a fifth of a
// warm `list --json`).
import { cmp } from './settled';
import type { BlobInfo, SessionInfo } from './types';

/** A session's JSON: its fields (one object), and its blobs (one object each) in the order they are listed. */
export interface SessionJson {
  fields: string;
  blobs: string[];
}

type ListedFields = Pick<SessionInfo, 'key' | 'source' | 'id' | 'title' | 'cwd' | 'dir' | 'bytes'>;
type ListedBlob = Pick<BlobInfo, 'path' | 'name' | 'tool' | 'toolCallId' | 'args' | 'bytes' | 'createdAt' | 'turn' | 'kind'>;

/** The order a session's blobs are listed in: oldest first, then by name. */
export function blobOrder(a: Pick<BlobInfo, 'createdAt' | 'name'>, b: Pick<BlobInfo, 'createdAt' | 'name'>): number {
  return cmp(a.createdAt, b.createdAt) || cmp(a.name, b.name);
}

/** `session` and `blobs` (already in blobOrder) as listed. */
export function sessionJson(session: ListedFields, blobs: readonly ListedBlob[]): SessionJson {
  const fields = JSON.stringify({ key: session.key, source: session.source, id: session.id, title: session.title ?? null, cwd: session.cwd ?? null, dir: session.dir, bytes: session.bytes });
  return { fields, blobs: blobs.map(blobJson) };
}

function blobJson(b: ListedBlob): string {
  return JSON.stringify({ path: b.path, tool: b.tool ?? null, toolCallId: b.toolCallId ?? null, args: b.args ?? null, bytes: b.bytes, createdAt: b.createdAt, turn: b.turn ?? null, kind: b.kind });
}
