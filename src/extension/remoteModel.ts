// The remote roots of the Spills tree (`spillway.remoteRoots`: s3://BUCKET/PREFIX): each one a top row whose
// agents, sessions and blobs come from the catalog's paged listing (src/catalog/remote/s3-listing.ts), a page of
// sessions at a time, and whose failure (no bucket, no endpoint, refused credentials) is a row saying so, never a
// thrown error. Lines of a remote blob are read by ranged GETs (s3-slice.ts). No vscode import: the tests drive it
// against a real server.
import type { S3Client } from '@aws-sdk/client-s3';
import { executeRemoteClean, type RemoteCleanResult } from '../catalog/remote/s3-clean';
import { grepRemote, type RemoteGrepOptions, type RemoteGrepSummary } from '../catalog/remote/s3-grep';
import { listSessions, type RemoteBlob, type RemoteSession } from '../catalog/remote/s3-listing';
import { readRecords, readRemoteSession } from '../catalog/remote/s3-session';
import { buildTurnSeries } from '../catalog/turns/turns';
import type { SessionInfo, TurnSeries } from '../catalog/types';
import { readRemoteLines, type RemoteSlice } from '../catalog/remote/s3-slice';
import { compactArgs } from '../common/one-line';
import type { ManifestRecord } from '../spill/manifest';
import { describeS3Error, newS3Client } from '../spill/remote/s3-client';
import { parseS3Url, s3Url, type S3Location } from '../spill/remote/s3-location';
import { blobCount, formatBytes, formatCount, sessionCount } from './format';
import type { LineRange } from './lineRange';

/** Sessions a remote root lists at first, and how many more each "Show more" row adds. */
export const REMOTE_PAGE = 200;

export type RemoteRootNode = { kind: 'remote-root'; root: RemoteRoot };
export type RemoteAgentNode = { kind: 'remote-agent'; root: RemoteRoot; agent: string; sessions: RemoteSession[] };
export type RemoteSessionNode = { kind: 'remote-session'; root: RemoteRoot; session: RemoteSession };
/** `record`: what the blob's record says (tool, arguments, lines), read when its session is first expanded. */
export type RemoteBlobNode = { kind: 'remote-blob'; root: RemoteRoot; blob: RemoteBlob; record?: ManifestRecord };
/** A row that is no object: the root's error, "loading…", "no spills", or "Show more" (choosing it lists the next page). */
export type RemoteNoteNode = { kind: 'remote-note'; root: RemoteRoot; note: 'error' | 'loading' | 'empty' | 'more'; text: string };

export type RemoteNode = RemoteRootNode | RemoteAgentNode | RemoteSessionNode | RemoteBlobNode | RemoteNoteNode;

const REMOTE_KINDS = new Set<string>(['remote-root', 'remote-agent', 'remote-session', 'remote-blob', 'remote-note']);

export function isRemoteNode(node: { kind: string } | undefined): node is RemoteNode {
  return node !== undefined && REMOTE_KINDS.has(node.kind);
}

/** One configured s3:// root: the sessions listed so far, the listing's place, and its failure if any. */
export class RemoteRoot {
  readonly loc: S3Location | undefined;
  private sessions: RemoteSession[] = [];
  private pending: AsyncGenerator<RemoteSession> | undefined;
  private loading: Promise<void> | undefined;
  private started = false;
  private done = false;
  /** Each expanded session's records (by agent/session), read once per listing. */
  private readonly records = new Map<string, Promise<ReadonlyArray<ManifestRecord | null | undefined>>>();
  error: string | undefined;

  constructor(
    readonly url: string,
    private readonly client: () => S3Client,
    readonly pageSize = REMOTE_PAGE,
  ) {
    try {
      this.loc = parseS3Url(url);
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    }
  }

  /** Whether a first page was asked for. */
  get loaded(): boolean {
    return this.started;
  }

  /** Whether more sessions are there to list. */
  get more(): boolean {
    return this.started && !this.done && this.error === undefined;
  }

  /** The sessions listed so far (key order: by agent, then session). */
  listed(): readonly RemoteSession[] {
    return this.sessions;
  }

  /** Lists the next page of sessions (the first when none was); calls made while one runs wait for it. */
  loadMore(): Promise<void> {
    this.loading ??= this.pull().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Forgets what was listed: the next loadMore starts from the first page. */
  reset(): void {
    void this.pending?.return(undefined);
    this.pending = undefined;
    this.sessions = [];
    this.started = false;
    this.done = false;
    this.records.clear();
    if (this.loc) this.error = undefined;
  }

  private async pull(): Promise<void> {
    if (!this.loc || this.done || this.error !== undefined) return;
    this.started = true;
    this.pending ??= listSessions(this.client(), this.loc);
    try {
      for (let n = 0; n < this.pageSize; n++) {
        const next = await this.pending.next();
        if (next.done) {
          this.done = true;
          return;
        }
        this.sessions.push(next.value);
      }
      // Ends with the page: the next session may complete the one just listed, since keys arrive sorted.
    } catch (err) {
      this.error = describeS3Error(err, `listing ${this.url}`);
      this.pending = undefined;
    }
  }

  /** Lines A..B of one of this root's blobs, by ranged GETs. */
  readLines(key: string, size: number, range: LineRange): Promise<RemoteSlice> {
    if (!this.loc) throw new Error(this.error ?? `not an s3:// location: ${this.url}`);
    return readRemoteLines(this.client(), this.loc, key, size, range.start, range.end);
  }

  /**
   * The records of a session's blobs, in its blobs' order (a GET each, 8 at a time); none where they cannot be
   * read: the rows then name the blobs by key, as before.
   */
  recordsOf(session: RemoteSession): Promise<ReadonlyArray<ManifestRecord | null | undefined>> {
    const id = `${session.agent}/${session.id}`;
    let read = this.records.get(id);
    if (!read) {
      read = this.recordsFor(session.blobs.map((b) => b.key));
      this.records.set(id, read);
    }
    return read;
  }

  /** The records of these blobs (by key), in order; none where they cannot be read. */
  recordsFor(keys: readonly string[]): Promise<ReadonlyArray<ManifestRecord | null | undefined>> {
    return this.loc ? readRecords(this.client(), this.loc.bucket, keys).catch(() => []) : Promise.resolve([]);
  }

  /** What the chart of one of this root's sessions draws, from its transcript's copy and its blobs' records. */
  async turns(session: RemoteSession): Promise<{ session: SessionInfo; series: TurnSeries } | { error: string }> {
    if (!this.loc) return { error: this.error ?? `not an s3:// location: ${this.url}` };
    try {
      const read = await readRemoteSession(this.client(), this.loc, { agent: session.agent, id: session.id }, { transcript: true });
      if (!read) return { error: `This session is gone from ${this.url}.` };
      if (read.calls.length === 0) return { error: 'No transcript with token usage is in the bucket for this session (a hook sends it after the blobs: it may not have gone up yet).' };
      return { session: read.session, series: buildTurnSeries(read.session.key, read.calls, read.session.blobs, read.session.skipped, read.session.source) };
    } catch (err) {
      return { error: describeS3Error(err, `reading the session from ${this.url}`) };
    }
  }

  /** Searches every blob under the root (streamed, a few at a time, stopped at `max` matches). */
  grep(opts: RemoteGrepOptions): Promise<RemoteGrepSummary> {
    if (!this.loc) return Promise.reject(new Error(this.error ?? `not an s3:// location: ${this.url}`));
    return grepRemote(this.client(), this.loc, opts);
  }

  /** Deletes exactly the session's listed blobs and their records (as `clean --session` does), then lists anew. */
  async deleteSession(session: RemoteSession): Promise<RemoteCleanResult> {
    if (!this.loc) throw new Error(this.error ?? `not an s3:// location: ${this.url}`);
    try {
      return await executeRemoteClean(this.client(), this.loc, { blobs: [...session.blobs], bytes: session.bytes });
    } finally {
      this.reset();
    }
  }

  /** The blob at this key among the sessions listed so far. */
  blob(key: string): RemoteBlob | undefined {
    for (const s of this.sessions) for (const b of s.blobs) if (b.key === key) return b;
    return undefined;
  }
}

/** The configured roots, kept across a change of the setting for the URLs that stay (and their pages). */
export class RemoteRoots {
  private roots: RemoteRoot[] = [];
  private shared: S3Client | undefined;

  constructor(
    /** The client every root shares; the SDK's default chain unless a test gives one. */
    private readonly makeClient: () => S3Client = () => newS3Client(),
    private readonly pageSize = REMOTE_PAGE,
  ) {}

  private client = (): S3Client => (this.shared ??= this.makeClient());

  /** Takes the setting's URLs; returns whether the list changed. */
  sync(urls: readonly string[]): boolean {
    const wanted = [...new Set(urls)];
    if (wanted.join('\n') === this.roots.map((r) => r.url).join('\n')) return false;
    const before = new Map(this.roots.map((r) => [r.url, r]));
    this.roots = wanted.map((u) => before.get(u) ?? new RemoteRoot(u, this.client, this.pageSize));
    return true;
  }

  all(): readonly RemoteRoot[] {
    return this.roots;
  }

  byUrl(url: string): RemoteRoot | undefined {
    return this.roots.find((r) => r.url === url);
  }

  /** Every root lists again from its first page (Refresh). */
  resetAll(): void {
    for (const r of this.roots) r.reset();
  }

  dispose(): void {
    this.shared?.destroy();
    this.shared = undefined;
  }
}

/** The top rows: one per root. */
export function remoteTopNodes(roots: RemoteRoots): RemoteRootNode[] {
  return roots.all().map((root) => ({ kind: 'remote-root', root }));
}

/** A node's children; a root's first page is listed when it is first expanded. */
export async function remoteChildren(node: RemoteNode): Promise<RemoteNode[]> {
  switch (node.kind) {
    case 'remote-root': {
      const { root } = node;
      if (!root.loaded && root.error === undefined) await root.loadMore();
      if (root.error !== undefined) return [{ kind: 'remote-note', root, note: 'error', text: root.error }];
      const rows: RemoteNode[] = agentsOf(root);
      if (root.more) rows.push({ kind: 'remote-note', root, note: 'more', text: `Show ${root.pageSize} more sessions` });
      else if (rows.length === 0) rows.push({ kind: 'remote-note', root, note: 'empty', text: 'No spills under this prefix' });
      return rows;
    }
    case 'remote-agent':
      return node.sessions.map((session) => ({ kind: 'remote-session', root: node.root, session }));
    case 'remote-session': {
      const records = await node.root.recordsOf(node.session);
      return node.session.blobs.map((blob, i) => {
        const record = records[i];
        return { kind: 'remote-blob', root: node.root, blob, ...(record ? { record } : {}) };
      });
    }
    default:
      return [];
  }
}

/** The root's listed sessions grouped by agent, agents in key order. */
function agentsOf(root: RemoteRoot): RemoteAgentNode[] {
  const byAgent = new Map<string, RemoteSession[]>();
  for (const s of root.listed()) {
    const list = byAgent.get(s.agent) ?? [];
    list.push(s);
    byAgent.set(s.agent, list);
  }
  return [...byAgent].map(([agent, sessions]) => ({ kind: 'remote-agent', root, agent, sessions }));
}

/** The row a node shows: plain text only (labels and tooltips are never markdown or HTML). */
export interface RemoteRow {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  icon: string;
  contextValue: string;
  collapsible: boolean;
}

export function remoteRow(node: RemoteNode): RemoteRow {
  const base = `remote:${node.root.url}`;
  switch (node.kind) {
    case 'remote-root': {
      const sessions = node.root.listed();
      const blobs = sessions.reduce((n, s) => n + s.blobs.length, 0);
      const bytes = sessions.reduce((n, s) => n + s.bytes, 0);
      const description = node.root.error !== undefined ? 'failed' : node.root.loaded ? `${blobCount(blobs)} · ${formatBytes(bytes)}${node.root.more ? ' so far' : ''}` : 'bucket';
      return { id: base, label: node.root.url, description, tooltip: `Remote root ${node.root.url}`, icon: 'cloud', contextValue: 'spillway:remoteRoot', collapsible: true };
    }
    case 'remote-agent': {
      const blobs = node.sessions.reduce((n, s) => n + s.blobs.length, 0);
      return { id: `${base}|agent:${node.agent}`, label: node.agent, description: `${sessionCount(node.sessions.length)} · ${blobCount(blobs)}`, icon: 'hubot', contextValue: 'spillway:remoteAgent', collapsible: true };
    }
    case 'remote-session': {
      const s = node.session;
      const newest = Math.max(0, ...s.blobs.map((b) => b.mtimeMs));
      return {
        id: `${base}|session:${s.agent}/${s.id}`,
        label: s.id,
        description: `${blobCount(s.blobs.length)} · ${formatBytes(s.bytes)}`,
        tooltip: `${s.agent} session ${s.id}\n${s.blobs.length} blobs, ${formatBytes(s.bytes)}${newest ? `\nlast written ${new Date(newest).toISOString()}` : ''}`,
        icon: 'history',
        contextValue: 'spillway:remoteSession',
        collapsible: true,
      };
    }
    case 'remote-blob': {
      const b = node.blob;
      const name = b.key.slice(b.key.lastIndexOf('/') + 1);
      const url = s3Url({ bucket: node.root.loc!.bucket, prefix: '' }, b.key);
      const row = { id: `${base}|blob:${b.key}`, icon: 'file', contextValue: 'spillway:remoteBlob', collapsible: false };
      const r = node.record;
      if (!r) return { ...row, label: name, description: formatBytes(b.bytes), tooltip: `${url}\n${formatBytes(b.bytes)}` };
      // As a local blob's row: its facts, then what made it.
      const args = compactArgs(r.args, 60);
      const what = args ? `${r.tool} ${args}` : r.tool;
      const facts = `${formatBytes(b.bytes)}${Number.isSafeInteger(r.lines) ? ` · ${formatCount(r.lines)} lines` : ''}`;
      return { ...row, label: facts, description: what, tooltip: `${url}\n${r.tool}${r.toolCallId ? ` (call ${r.toolCallId})` : ''}\n${facts}${r.createdAt ? `\nspilled ${r.createdAt}` : ''}` };
    }
    case 'remote-note':
      return { id: `${base}|note:${node.note}`, label: node.text, icon: node.note === 'error' ? 'error' : node.note === 'more' ? 'ellipsis' : 'info', contextValue: `spillway:remoteNote`, collapsible: false, ...(node.note === 'error' ? { tooltip: node.text } : {}) };
  }
}

/** The question before a remote session's copies go: there is no trash in a bucket. */
export function confirmRemoteDelete(node: RemoteSessionNode): { message: string; detail: string; action: string } {
  const s = node.session;
  return {
    message: `Delete ${blobCount(s.blobs.length)} (${formatBytes(s.bytes)}) of session "${s.id}" from ${node.root.url}?`,
    detail: 'The copies in the bucket and their records are deleted permanently: a bucket has no trash. Local copies on the machines that spilled them stay.',
    action: 'Delete',
  };
}

export function remoteDeletedMessage(result: RemoteCleanResult): string {
  const blobs = result.deleted.filter((k) => k.endsWith('.txt')).length;
  const failed = result.failed.length ? `; ${result.failed.length} could not be deleted (${result.failed[0]!.key}: ${result.failed[0]!.reason})` : '';
  return `Deleted ${blobCount(blobs)} and ${blobs === 1 ? 'its record' : 'their records'} from the bucket${failed}.`;
}

/** The parent row (for reveal): a blob's session, a session's agent, an agent's root. */
export function remoteParent(node: RemoteNode): RemoteNode | undefined {
  switch (node.kind) {
    case 'remote-root':
      return undefined;
    case 'remote-note':
      return { kind: 'remote-root', root: node.root };
    case 'remote-agent':
      return { kind: 'remote-root', root: node.root };
    case 'remote-session':
      return agentsOf(node.root).find((a) => a.agent === node.session.agent);
    case 'remote-blob': {
      const session = node.root.listed().find((s) => s.blobs.includes(node.blob));
      return session && { kind: 'remote-session', root: node.root, session };
    }
  }
}

// ---- the read-only documents of remote slices ------------------------------

export const REMOTE_SCHEME = 'spillway-s3';

/** Lines a remote blob opens at when none are asked for. */
export const REMOTE_FIRST_LINES = 2000;

export interface RemoteSliceRequest {
  root: string;
  key: string;
  size: number;
  range: LineRange;
}

/** The URI's parts: the path names the blob and the lines in the tab; the query carries the data. */
export function remoteSliceUriParts(req: RemoteSliceRequest): { scheme: string; path: string; query: string } {
  const name = req.key.slice(req.key.lastIndexOf('/') + 1);
  const query = new URLSearchParams({ root: req.root, key: req.key, size: String(req.size), start: String(req.range.start), end: String(req.range.end) }).toString();
  return { scheme: REMOTE_SCHEME, path: `/${name} (lines ${req.range.start}-${req.range.end})`, query };
}

export function parseRemoteSliceQuery(query: string): RemoteSliceRequest | undefined {
  const q = new URLSearchParams(query);
  const root = q.get('root');
  const key = q.get('key');
  const [size, start, end] = ['size', 'start', 'end'].map((k) => Number(q.get(k)));
  if (!root || !key || !Number.isSafeInteger(size) || size! < 0 || !Number.isInteger(start) || !Number.isInteger(end) || start! < 1 || end! < start!) return undefined;
  return { root, key, size: size!, range: { start: start!, end: end! } };
}

/** Lines above a slice's text (the editor's line N+HEADER is the blob's line start+N-1). */
export const REMOTE_HEADER_LINES = 2;

/** What the slice's document holds: a header saying which lines of which object, then the lines. */
export async function remoteSliceText(roots: RemoteRoots, req: RemoteSliceRequest): Promise<{ text: string; slice: RemoteSlice }> {
  const root = roots.byUrl(req.root);
  // Only configured roots are read, and only keys under their prefix: a crafted URI reads nothing else.
  if (!root?.loc || !req.key.startsWith(root.loc.prefix)) throw new Error(`${req.key}: not under a configured remote root`);
  const slice = await root.readLines(req.key, req.size, req.range);
  const last = slice.endedAt ?? req.range.end;
  const url = s3Url({ bucket: root.loc.bucket, prefix: '' }, req.key);
  if (last < req.range.start) throw new Error(`${url} has ${last} lines; line ${req.range.start} is past its end`);
  const header = `# Spillway: lines ${req.range.start}-${last} of ${url} (${formatBytes(req.size)}; read by ranged GETs, ${formatBytes(slice.bytesRead)} fetched; read-only)`;
  return { text: `${header}\n\n${slice.data.toString('utf8')}`, slice };
}
