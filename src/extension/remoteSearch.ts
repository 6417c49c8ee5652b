// The Search view's matches under remote roots: each blob and its session described as a local one is (BlobInfo,
// SessionInfo), so the view groups and names them alike, and kept with its tree node, which opens the match by
// ranged GETs. No vscode import: the tests drive it against a real server.
import type { RemoteBlob } from '../catalog/remote/s3-listing';
import type { BlobInfo, GrepMatch, SessionInfo, SourceName } from '../catalog/types';
import { recordedBlob } from '../catalog/sources/common';
import { describeS3Error } from '../spill/remote/s3-client';
import { s3Url } from '../spill/remote/s3-location';
import type { RemoteBlobNode, RemoteRoot } from './remoteModel';

/** A matched line is kept up to this many characters, as the local search clips its lines. */
const LINE_CHARS = 1000;

export interface RemoteHit {
  blob: BlobInfo;
  session: SessionInfo;
  node: RemoteBlobNode;
}

/** The remote blobs a search matched, by URL; a session described once for all its blobs. */
export class RemoteHits {
  private readonly hits = new Map<string, RemoteHit>();
  private readonly sessions = new Map<string, SessionInfo>();

  get(url: string): RemoteHit | undefined {
    return this.hits.get(url);
  }

  of(root: RemoteRoot, blob: RemoteBlob): RemoteHit {
    const url = s3Url({ bucket: root.loc!.bucket, prefix: '' }, blob.key);
    let hit = this.hits.get(url);
    if (hit) return hit;
    const sessionKey = `remote:${root.url}|${blob.agent}/${blob.sessionId}`;
    const time = new Date(blob.mtimeMs).toISOString();
    let session = this.sessions.get(sessionKey);
    if (!session) {
      const dir = url.slice(0, url.lastIndexOf('/'));
      session = { key: sessionKey, source: blob.agent as SourceName, id: blob.sessionId, title: `${blob.sessionId} (${root.url})`, dir, root: root.url, bytes: 0, updatedAt: time, blobs: [], skipped: 0, notes: [] };
      this.sessions.set(sessionKey, session);
    }
    const info: BlobInfo = { ...recordedBlob({ path: url, name: url.slice(url.lastIndexOf('/') + 1) }, { size: blob.bytes, mtimeMs: blob.mtimeMs }, undefined), key: url, sessionKey };
    session.blobs.push(info);
    session.bytes += blob.bytes;
    if (time > session.updatedAt) session.updatedAt = time;
    hit = { blob: info, session, node: { kind: 'remote-blob', root, blob } };
    this.hits.set(url, hit);
    return hit;
  }

  /** Names the root's matched blobs by their records (tool, command, lines), as the tree names them. */
  async describe(root: RemoteRoot): Promise<void> {
    const hits = [...this.hits.values()].filter((h) => h.node.root === root && h.blob.tool === undefined);
    const records = await root.recordsFor(hits.map((h) => h.node.blob.key));
    for (const [i, h] of hits.entries()) {
      const r = records[i];
      if (!r) continue;
      Object.assign(h.blob, recordedBlob(h.blob, { size: h.blob.bytes, mtimeMs: h.blob.mtimeMs }, r), Number.isSafeInteger(r.lines) ? { lines: r.lines } : {});
    }
  }
}

export interface RemoteSearchSummary {
  matches: number;
  truncated: boolean;
  errors: Array<{ path: string; message: string }>;
}

/**
 * Searches the roots in turn, `max` matches in all; each match is given as the local search gives one (its path the
 * blob's URL). A root that fails is an error of the summary; the others are still searched.
 */
export async function searchRemoteRoots(roots: readonly RemoteRoot[], test: (line: string) => boolean, max: number, hits: RemoteHits, onMatch: (m: GrepMatch) => void, cancelled: () => boolean): Promise<RemoteSearchSummary> {
  const summary: RemoteSearchSummary = { matches: 0, truncated: false, errors: [] };
  for (const root of roots) {
    if (cancelled() || summary.matches >= max) {
      summary.truncated ||= summary.matches >= max;
      break;
    }
    if (!root.loc) continue;
    try {
      const r = await root.grep({
        test,
        max: max - summary.matches,
        onMatch: (m) => {
          if (cancelled()) return;
          onMatch({ path: hits.of(root, m.blob).blob.path, line: m.line, text: m.text.length > LINE_CHARS ? m.text.slice(0, LINE_CHARS) : m.text });
        },
      });
      summary.matches += r.matches;
      summary.truncated ||= r.truncated;
      await hits.describe(root);
    } catch (err) {
      summary.errors.push({ path: root.url, message: describeS3Error(err, `searching ${root.url}`) });
    }
  }
  return summary;
}
