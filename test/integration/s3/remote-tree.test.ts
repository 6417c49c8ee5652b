// The Spills tree's remote roots (src/extension/remoteModel.ts) against a real Ceph RGW: a root lists agents,
// sessions and blobs a page of sessions at a time, a failing bucket or endpoint is a row saying what failed, and a
// blob's line range is read by ranged GETs, not downloaded.
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../../../src/extension/settings';
import {
  confirmRemoteDelete,
  parseRemoteSliceQuery,
  remoteDeletedMessage,
  remoteChildren,
  remoteParent,
  remoteRow,
  remoteSliceText,
  remoteSliceUriParts,
  remoteTopNodes,
  RemoteRoots,
  type RemoteNode,
  type RemoteSessionNode,
} from '../../../src/extension/remoteModel';
import { RemoteHits, searchRemoteRoots } from '../../../src/extension/remoteSearch';
import { freePort, startRgw, type Rgw } from '../../s3/rgw';

const BUCKET = 'tree-spills';
const ROOT = `s3://${BUCKET}/team/ci`;
let rgw: Rgw;

/** Lines `line N ...` numbered from 1, about 60 bytes each. */
function numbered(count: number): string {
  return Array.from({ length: count }, (_, i) => `line ${i + 1} ${'x'.repeat(50)}\n`).join('');
}

const BIG_LINES = 100_000;
const objects: Record<string, string> = {
  'team/ci/claude-code/s-1/aaa.txt': numbered(10),
  'team/ci/claude-code/s-1/aaa.json': '{"tool":"Bash","toolCallId":"toolu_1","args":{"command":"npm test"},"lines":10}',
  'team/ci/claude-code/s-2/bbb.txt': numbered(BIG_LINES),
  'team/ci/codex/s-3/ccc.txt': 'only line, no newline',
  // A record that is not one: the blob is named by its key.
  'team/ci/codex/s-3/ccc.json': 'not json',
  'team/ci/codex/s-3/transcript.jsonl': '{}\n',
  // Beside the prefix and off the layout: neither is listed.
  'team/other/claude-code/s-9/zzz.txt': 'elsewhere\n',
  'team/ci/README': 'not a blob\n',
};

async function kids(node: RemoteNode): Promise<RemoteNode[]> {
  return remoteChildren(node);
}

beforeAll(async () => {
  rgw = await startRgw();
  await rgw.createBucket(BUCKET);
  const c = rgw.client();
  for (const [Key, Body] of Object.entries(objects)) await c.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body }));
});
afterAll(async () => {
  await rgw?.stop();
});

describe('remote roots in the Spills tree (real RGW)', () => {
  it('reads spillway.remoteRoots: s3:// entries only, trimmed', () => {
    const s = readSettings(<T>(k: string) => (k === 'remoteRoots' ? ([' s3://b-1/p ', '/tmp/x', 3, 's3://b-2'] as T) : undefined));
    expect(s.remoteRoots).toEqual(['s3://b-1/p', 's3://b-2']);
    expect(readSettings(() => undefined).remoteRoots).toEqual([]);
  });

  it('lists agents, sessions and blobs under the prefix, a page of sessions at a time', async () => {
    const roots = new RemoteRoots(() => rgw.client(), 2);
    expect(roots.sync([ROOT])).toBe(true);
    expect(roots.sync([ROOT])).toBe(false);
    const [top] = remoteTopNodes(roots);
    expect(remoteRow(top!)).toMatchObject({ label: ROOT, icon: 'cloud', contextValue: 'spillway:remoteRoot', collapsible: true });

    // First page: two sessions, both of claude-code, then a "Show more" row.
    let rows = await kids(top!);
    expect(rows.map((r) => remoteRow(r).label)).toEqual(['claude-code', 'Show 2 more sessions']);
    expect(rows[1]).toMatchObject({ kind: 'remote-note', note: 'more' });
    await top!.root.loadMore();
    rows = await kids(top!);
    expect(rows.map((r) => remoteRow(r).label)).toEqual(['claude-code', 'codex']);
    expect(top!.root.more).toBe(false);

    const sessions = await kids(rows[0]!);
    expect(sessions.map((r) => remoteRow(r).label)).toEqual(['s-1', 's-2']);
    // A blob with a record: its facts and what made it, as a local blob's row.
    const described = (await kids(sessions[0]!))[0]!;
    expect(remoteRow(described)).toMatchObject({ label: `${Buffer.byteLength(objects['team/ci/claude-code/s-1/aaa.txt']!)} B · 10 lines`, description: 'Bash npm test' });
    expect(remoteRow(described).tooltip).toContain('Bash (call toolu_1)');
    // No transcript travelled with s-2: its chart says so instead of drawing nothing.
    expect(await top!.root.turns((sessions[1] as RemoteSessionNode).session)).toEqual({ error: expect.stringContaining('No transcript with token usage is in the bucket') });
    const blobs = await kids(sessions[1]!);
    expect(blobs).toHaveLength(1);
    const blob = blobs[0]!;
    expect(blob).toMatchObject({ kind: 'remote-blob', blob: { key: 'team/ci/claude-code/s-2/bbb.txt', bytes: Buffer.byteLength(objects['team/ci/claude-code/s-2/bbb.txt']!), agent: 'claude-code', sessionId: 's-2' } });
    expect(remoteRow(blob)).toMatchObject({ label: 'bbb.txt', contextValue: 'spillway:remoteBlob', collapsible: false });
    // Rows have parents for reveal, and ids that differ.
    expect(remoteParent(blob)).toMatchObject({ kind: 'remote-session', session: { id: 's-2' } });
    expect(remoteParent(sessions[1]!)).toMatchObject({ kind: 'remote-agent', agent: 'claude-code' });
    const ids = [top!, ...rows, ...sessions, blob].map((r) => remoteRow(r).id);
    expect(new Set(ids).size).toBe(ids.length);
    // The transcript's copy and the record are no blobs; keys beside the prefix are not listed.
    const codexBlobs = await kids((await kids(rows[1]!))[0]!);
    expect(codexBlobs.map((r) => remoteRow(r).label)).toEqual(['ccc.txt']);
    expect(top!.root.listed().flatMap((s) => s.blobs.map((b) => b.key))).not.toContain('team/other/claude-code/s-9/zzz.txt');

    // Refresh lists from the first page again.
    roots.resetAll();
    expect(top!.root.loaded).toBe(false);
    expect((await kids(top!)).map((r) => remoteRow(r).label)).toEqual(['claude-code', 'Show 2 more sessions']);
    roots.dispose();
  });

  it('opens a line range by ranged GETs: the lines asked for, a small part of the object read', async () => {
    const roots = new RemoteRoots(() => rgw.client());
    roots.sync([ROOT]);
    const key = 'team/ci/claude-code/s-2/bbb.txt';
    const size = Buffer.byteLength(objects[key]!);
    const parts = remoteSliceUriParts({ root: ROOT, key, size, range: { start: 50_000, end: 50_002 } });
    expect(parts.path).toBe('/bbb.txt (lines 50000-50002)');
    const req = parseRemoteSliceQuery(parts.query)!;
    const { text, slice } = await remoteSliceText(roots, req);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^# Spillway: lines 50000-50002 of s3:\/\/tree-spills\/team\/ci\/claude-code\/s-2\/bbb\.txt/);
    expect(lines[1]).toBe('');
    expect(lines.slice(2, 5).map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['line 50000', 'line 50001', 'line 50002']);
    // No line index (no record with one): read from the start up to the range, a window at a time, not the whole object.
    expect(slice.bytesRead).toBeLessThan(size);

    // The last line without its newline, and a range past the end.
    const tail = await remoteSliceText(roots, { root: ROOT, key: 'team/ci/codex/s-3/ccc.txt', size: 21, range: { start: 1, end: 5 } });
    expect(tail.text.split('\n')[0]).toMatch(/lines 1-1 of/);
    expect(tail.text.split('\n')[2]).toBe('only line, no newline');
    await expect(remoteSliceText(roots, { root: ROOT, key, size, range: { start: BIG_LINES + 5, end: BIG_LINES + 9 } })).rejects.toThrow(`has ${BIG_LINES} lines`);
    roots.dispose();
  });

  it('reads only configured roots and keys under their prefix', async () => {
    const roots = new RemoteRoots(() => rgw.client());
    roots.sync([ROOT]);
    await expect(remoteSliceText(roots, { root: ROOT, key: 'team/other/claude-code/s-9/zzz.txt', size: 10, range: { start: 1, end: 1 } })).rejects.toThrow('not under a configured remote root');
    await expect(remoteSliceText(roots, { root: `s3://${BUCKET}/team/other`, key: 'team/other/claude-code/s-9/zzz.txt', size: 10, range: { start: 1, end: 1 } })).rejects.toThrow('not under a configured remote root');
    expect(parseRemoteSliceQuery('root=s3://b/p&key=k&size=1&start=3&end=2')).toBeUndefined();
    roots.dispose();
  });

  it('a missing bucket, a dead endpoint and a malformed URL are rows saying so, not thrown errors', async () => {
    const port = await freePort();
    const dead = () =>
      new S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
    const live = new RemoteRoots(() => rgw.client());
    live.sync(['s3://no-such-bucket/p', 's3://Bad_Bucket/p', ROOT]);
    const [missing, malformed, good] = remoteTopNodes(live);
    const missingRows = await kids(missing!);
    expect(missingRows).toHaveLength(1);
    expect(missingRows[0]).toMatchObject({ kind: 'remote-note', note: 'error' });
    expect(remoteRow(missingRows[0]!).label).toMatch(/listing s3:\/\/no-such-bucket\/p: the bucket does not exist/);
    expect(remoteRow(missing!).description).toBe('failed');
    expect(remoteRow((await kids(malformed!))[0]!).label).toMatch(/not a valid bucket name/);
    // The others still list.
    expect((await kids(good!)).map((r) => remoteRow(r).label)).toEqual(['claude-code', 'codex']);
    live.dispose();

    const down = new RemoteRoots(dead);
    down.sync([ROOT]);
    const rows = await kids(remoteTopNodes(down)[0]!);
    expect(rows[0]).toMatchObject({ kind: 'remote-note', note: 'error' });
    expect(remoteRow(rows[0]!).label).toMatch(/nothing answers at the endpoint/);
    down.dispose();
  });

  it('searches every blob under the roots for the Search view, each match with its blob and session; a failing root is an error, not the end', async () => {
    const roots = new RemoteRoots(() => rgw.client());
    roots.sync(['s3://no-such-bucket/p', ROOT]);
    const hits = new RemoteHits();
    const found: Array<{ path: string; line: number; text: string }> = [];
    const r = await searchRemoteRoots(roots.all(), (l) => /^line 7 /.test(l), 100, hits, (m) => found.push(m), () => false);
    expect(r).toMatchObject({ matches: 2, truncated: false });
    expect(r.errors).toEqual([{ path: 's3://no-such-bucket/p', message: expect.stringMatching(/bucket does not exist/) }]);
    expect(found.map((m) => `${m.path}:${m.line}`).sort()).toEqual([`s3://${BUCKET}/team/ci/claude-code/s-1/aaa.txt:7`, `s3://${BUCKET}/team/ci/claude-code/s-2/bbb.txt:7`]);
    // Named by their records where they have one.
    expect(hits.get(`s3://${BUCKET}/team/ci/claude-code/s-1/aaa.txt`)!.blob).toMatchObject({ tool: 'Bash', args: 'npm test', toolCallId: 'toolu_1', lines: 10 });
    expect(hits.get(`s3://${BUCKET}/team/ci/claude-code/s-2/bbb.txt`)!.blob.tool).toBeUndefined();
    const hit = hits.get(found[0]!.path)!;
    expect(hit.session).toMatchObject({ source: 'claude-code', root: ROOT });
    expect(hit.session.blobs.map((b) => b.path)).toContain(found[0]!.path);
    expect(hit.node).toMatchObject({ kind: 'remote-blob', blob: { key: found[0]!.path.slice(`s3://${BUCKET}/`.length) } });
    // The count is shared across roots: one match asked for, one given, and said to be cut.
    const capped = await searchRemoteRoots(roots.all(), (l) => l.startsWith('line'), 1, new RemoteHits(), () => undefined, () => false);
    expect(capped).toMatchObject({ matches: 1, truncated: true });
    roots.dispose();
  });

  it("deletes a session's copies and records, nothing else, and lists the root again without it", async () => {
    const roots = new RemoteRoots(() => rgw.client());
    roots.sync([ROOT]);
    const [root] = remoteTopNodes(roots);
    const claude = (await kids(root!)).find((n) => remoteRow(n).label === 'claude-code')!;
    const session = (await kids(claude)).find((n) => remoteRow(n).label === 's-1') as RemoteSessionNode;
    expect(confirmRemoteDelete(session).message).toBe(`Delete 1 blob (${remoteRow({ kind: 'remote-blob', root: root!.root, blob: session.session.blobs[0]! }).description}) of session "s-1" from ${ROOT}?`);
    const result = await root!.root.deleteSession(session.session);
    expect(remoteDeletedMessage(result)).toBe('Deleted 1 blob and its record from the bucket.');
    const left = ((await rgw.client().send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((o) => o.Key!).sort();
    expect(left).toEqual(Object.keys(objects).filter((k) => !k.startsWith('team/ci/claude-code/s-1/')).sort());
    const sessions = (await kids(remoteTopNodes(roots)[0]!)).flatMap((n) => (n.kind === 'remote-agent' ? n.sessions.map((s) => s.id) : []));
    expect(sessions.sort()).toEqual(['s-2', 's-3']);
    roots.dispose();
  });
});
