// A session as `spillway list --json` prints it, still compact: its own
// fields as one object, then each blob as one object. Made when a session's
// index line is written and kept at the end of that line, so a listing prints
// a session that has not changed without parsing its description again (at
// 100,000 blobs, re-reading and rendering every description was a fifth of a
// warm `list --json`).

import * as path from 'node:path';
import { cmp } from '../shared/cmp';
import type { BlobInfo, SessionInfo } from '../types';

/** A session's own fields as listed. */
export interface ListedFields {
  key: string;
  source: string;
  id: string;
  title: string | null;
  cwd: string | null;
  dir: string;
  bytes: number;
}

/** A session as listed: its fields, and its blobs' JSON (one object each) in the order they are listed. */
export interface SessionJson {
  fields: ListedFields;
  blobs: string[];
}

type SessionFields = Pick<SessionInfo, 'key' | 'source' | 'id' | 'title' | 'cwd' | 'dir' | 'bytes'>;
type ListedBlob = Pick<BlobInfo, 'path' | 'name' | 'tool' | 'toolCallId' | 'args' | 'bytes' | 'createdAt' | 'turn' | 'kind'>;

/** The order a session's blobs are listed in: oldest first, then by name. */
export function blobOrder(a: Pick<BlobInfo, 'createdAt' | 'name'>, b: Pick<BlobInfo, 'createdAt' | 'name'>): number {
  return cmp(a.createdAt, b.createdAt) || cmp(a.name, b.name);
}

/** `session` and `blobs` (already in blobOrder) as listed. */
export function sessionJson(session: SessionFields, blobs: readonly ListedBlob[]): SessionJson {
  const fields = { key: session.key, source: session.source, id: session.id, title: session.title ?? null, cwd: session.cwd ?? null, dir: session.dir, bytes: session.bytes };
  return { fields, blobs: blobs.map(blobJson) };
}

function blobJson(b: ListedBlob): string {
  return JSON.stringify({ path: b.path, tool: b.tool ?? null, toolCallId: b.toolCallId ?? null, args: b.args ?? null, bytes: b.bytes, createdAt: b.createdAt, turn: b.turn ?? null, kind: b.kind });
}

/** What a scan checked of a session, that a kept listing must agree with. */
export interface CheckedSession {
  key: string;
  /** Its folder as described, its blobs' bytes, how many it lists, and the folders they were checked in. */
  dir?: string;
  bytes: number;
  blobs: number;
  folders?: readonly string[];
}

const isText = (v: unknown): boolean => v === null || typeof v === 'string';

/**
 * Whether a kept listing is the session the scan checked: its key, folder, bytes and number of blobs, each blob
 * named as an entry (no separator, no escape, not '.' or '..') of a folder its checked blobs lie in. An index edited
 * by hand then lists nothing outside those folders; anything else about the session is rendered from its description.
 */
export function listedAsChecked(kept: SessionJson, s: CheckedSession): boolean {
  const f = kept.fields as Partial<ListedFields> | null;
  if (typeof f !== 'object' || f === null || f.key !== s.key || f.dir !== s.dir || f.bytes !== s.bytes || kept.blobs.length !== s.blobs) return false;
  if (typeof f.source !== 'string' || typeof f.id !== 'string' || !isText(f.title) || !isText(f.cwd) || !s.folders) return false;
  // Each folder as its blobs' JSON begins: `"`, the folder escaped, its separator.
  const folders = new Set(s.folders.map((folder) => JSON.stringify(folder.endsWith(path.sep) ? folder : folder + path.sep).slice(0, -1)));
  // The folder the blob before lay in: most blobs lie in it, and comparing strings costs less than hashing one.
  let last = '';
  return kept.blobs.every((blob) => {
    const end = blob.startsWith('{"path":"') ? blob.indexOf('","tool":') : -1;
    const cut = blob.lastIndexOf(path.sep, end);
    if (end === -1 || cut <= 8) return false;
    const folder = blob.slice(8, cut + 1);
    if (folder !== last && !folders.has(folder)) return false;
    last = folder;
    const name = blob.slice(cut + 1, end);
    return name !== '' && name !== '.' && name !== '..' && !name.includes('\\');
  });
}
