// A session as the catalog shows it (SessionInfo), made from its description, and finding sessions by name.

import { isoTime } from '../../spill/iso-time';
import { blobOrder, sessionJson, type SessionJson } from '../index/session-json';
import { type Described } from '../sources/source';
import type { BlobInfo, SessionInfo } from '../types';

/** Whether `idOrKey` may name the session: its key, or its id or the start of it (see sessionsNamed). */
export function mayName(idOrKey: string, session: SessionInfo): boolean {
  return session.key === idOrKey || session.id.startsWith(idOrKey);
}

/** The sessions among `candidates` that `idOrKey` names: by exact key or id, else (4 characters or more) by the start of the id. */
export function sessionsNamed(idOrKey: string, candidates: readonly SessionInfo[]): SessionInfo[] {
  const exact = candidates.filter((s) => s.key === idOrKey || s.id === idOrKey);
  if (exact.length > 0 || idOrKey.length < 4) return exact;
  return candidates.filter((s) => s.id.startsWith(idOrKey));
}

/**
 * A described blob as the catalog's BlobInfo of session `sessionKey`. The
 * stored object itself becomes it: one copy of each blob in memory (blobs read
 * from the index already have both fields, so these stores add no property).
 */
export function ownBlob(raw: Described['blobs'][number], sessionKey: string): BlobInfo {
  const blob = raw as BlobInfo;
  blob.key = raw.path;
  blob.sessionKey = sessionKey;
  return blob;
}
/** Visit each item in order, waiting for what a visit returns when that is a promise (a slow reader catching up). */
export async function visitInTurn<T>(items: Iterable<T>, visit: (item: T) => unknown): Promise<void> {
  for (const item of items) {
    const wait = visit(item);
    if (wait instanceof Promise) await wait;
  }
}

/** A session of these blobs (sorted here, oldest first): its size and last update follow from them. */
export function sessionInfo(key: string, root: string, session: Described['session'], blobs: BlobInfo[]): SessionInfo {
  blobs.sort(blobOrder);
  // Field by field, not `...session`: spreading an object JSON.parse made takes V8's slow path.
  // Every session has one shape: fields always present, undefined when absent (as decoded blobs).
  const { source, id, title, cwd, dir, transcript, skipped, notes } = session;
  return {
    key,
    source,
    id,
    title,
    cwd,
    dir,
    transcript,
    root,
    bytes: blobs.reduce((sum, b) => sum + b.bytes, 0),
    updatedAt: isoTime(blobs.reduce((max, b) => Math.max(max, b.mtimeMs), -Infinity)),
    blobs,
    skipped,
    notes,
  };
}

/** A session in memory as listed (its blobs are in blobOrder already). */
export function infoJson(info: SessionInfo): SessionJson {
  return sessionJson(info, info.blobs);
}

/** What a listener could see of a session, to tell a real change from a touch. */
export function fingerprint(info: SessionInfo): string {
  return JSON.stringify([info.title, info.cwd, info.transcript, info.skipped, info.notes, info.blobs.map((b) => [b.path, b.bytes, b.mtimeMs, b.tool, b.toolCallId, b.args, b.turn, b.attribution, b.digestChars])]);
}

