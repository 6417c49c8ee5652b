// list, show, grep, turns and clean on an `s3://BUCKET/PREFIX` root: what those commands do on folders, read from the
// bucket (pages of ListObjectsV2, ranged GETs, streamed objects, DeleteObjects of exactly the listed keys).
// main.ts sends a command here when its --root (or show's PATH) is an s3:// location (remote-root.ts).
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { executeRemoteClean, planRemoteClean, type RemoteCleanTarget } from '../../catalog/remote/s3-clean';
import { grepRemote } from '../../catalog/remote/s3-grep';
import { listSessions } from '../../catalog/remote/s3-listing';
import { readRemoteLines } from '../../catalog/remote/s3-slice';
import { findRemoteSessions, readRemoteSession } from '../../catalog/remote/s3-session';
import { buildTurnSeries } from '../../catalog/turns/turns';
import { printTurns, TURNS_USAGE } from './turns';
import { describeS3Error, newS3Client } from '../../spill/remote/s3-client';
import { isS3Url, parseS3Url, s3Url, type S3Location } from '../../spill/remote/s3-location';
import { UsageError, type CliIO } from '../io';
import { formatBytes, human, json, parseDuration, parseFlags, tableLines } from '../format';
import { parseLineRange } from './show';

export async function remoteCommand(name: string, argv: string[], io: CliIO): Promise<number> {
  const client = newS3Client(io.env);
  try {
    if (name === 'list') return await list(client, argv, io);
    if (name === 'show') return await show(client, argv, io);
    if (name === 'grep') return await grep(client, argv, io);
    if (name === 'turns') return await turns(client, argv, io);
    return await clean(client, argv, io);
  } catch (err) {
    if (err instanceof UsageError || (err as Error).name === 'UsageError') throw err;
    throw new Error(describeS3Error(err, `${name} on the bucket failed`));
  } finally {
    client.destroy();
  }
}

/** The one s3:// root of a remote command (a bucket root beside local folders is not mixed in one listing). */
function oneRoot(roots: string[] | undefined): S3Location {
  const remote = (roots ?? []).filter(isS3Url);
  if (remote.length !== 1 || (roots ?? []).length !== 1) throw new UsageError('give one s3://BUCKET/PREFIX root (an s3:// root is not listed together with folders)');
  try {
    return parseS3Url(remote[0]!);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

const COMMON = { root: { type: 'string', multiple: true }, json: { type: 'boolean' }, 'no-default-roots': { type: 'boolean' } } as const;

async function list(client: S3Client, argv: string[], io: CliIO): Promise<number> {
  const { values } = parseFlags(argv, COMMON, false);
  const loc = oneRoot(values.root);
  let sessions = 0;
  let blobs = 0;
  let bytes = 0;
  if (values.json) io.stdout('{\n  "sessions": [');
  for await (const s of listSessions(client, loc)) {
    if (values.json) {
      const blobsJson = s.blobs.map((b) => JSON.stringify({ path: s3Url(loc, b.key), bytes: b.bytes, mtime: new Date(b.mtimeMs).toISOString() }));
      io.stdout(`${sessions > 0 ? ',' : ''}\n    ${JSON.stringify({ source: s.agent, id: s.id, bytes: s.bytes })}`.replace(/}$/, `, "blobs": [${blobsJson.join(', ')}]}`));
    } else {
      io.stdout(human`${s.agent}  ${s.id}\n  ${s.blobs.length} blob(s), ${formatBytes(s.bytes)}\n` + tableLines(s.blobs.map((b) => ['   ', formatBytes(b.bytes), new Date(b.mtimeMs).toISOString(), s3Url(loc, b.key)])).join(''));
    }
    sessions++;
    blobs += s.blobs.length;
    bytes += s.bytes;
    await io.caughtUp?.();
  }
  if (values.json) io.stdout(`${sessions > 0 ? '\n  ' : ''}]\n}\n`);
  else io.stdout(`${sessions === 0 ? 'No spill sessions found.\n' : '\n'}${sessions} session(s), ${blobs} blob(s), ${formatBytes(bytes)}\n`);
  return 0;
}

async function show(client: S3Client, argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...COMMON, lines: { type: 'string' } });
  if (positionals.length !== 1 || !isS3Url(positionals[0])) throw new UsageError('expected one s3://BUCKET/KEY');
  const url = positionals[0];
  const { bucket, prefix } = parseS3Url(url);
  const key = prefix.replace(/\/$/, '');
  const loc = { bucket, prefix: '' };
  const size = (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength ?? 0;
  const { start, end } = values.lines !== undefined ? parseLineRange(values.lines) : { start: 1, end: Number.MAX_SAFE_INTEGER };
  const slice = await readRemoteLines(client, loc, key, size, start, end);
  io.stdout(slice.data);
  if (values.lines !== undefined && slice.endedAt !== undefined) io.stderr(human`spillway show: ${url} ends at line ${slice.endedAt}\n`);
  return 0;
}

async function grep(client: S3Client, argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...COMMON, regex: { type: 'boolean' }, 'ignore-case': { type: 'boolean', short: 'i' }, 'smart-case': { type: 'boolean', short: 'S' }, max: { type: 'string' } });
  if (positionals.length !== 1 || positionals[0] === '') throw new UsageError('expected one PATTERN');
  const loc = oneRoot(values.root);
  const max = values.max !== undefined ? Number(values.max) : 1000;
  if (!Number.isInteger(max) || max < 1) throw new UsageError(`invalid --max '${values.max}' (a positive integer)`);
  const pattern = positionals[0]!;
  const fold = values['ignore-case'] === true || (values['smart-case'] === true && pattern === pattern.toLowerCase());
  let re: RegExp;
  try {
    re = new RegExp(values.regex ? pattern : pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), fold ? 'iu' : 'u');
  } catch (err) {
    throw new UsageError(`invalid pattern: ${(err as Error).message}`);
  }
  const matches: unknown[] = [];
  const summary = await grepRemote(client, loc, {
    test: (line) => re.test(line),
    max,
    onMatch: (m) => {
      const path = s3Url(loc, m.key);
      if (values.json) matches.push({ path, line: m.line, text: m.text });
      else io.stdout(human`${path}:${m.line}:${m.text}\n`);
      return io.caughtUp?.();
    },
  });
  if (values.json) json(io, { matches, truncated: summary.truncated });
  else if (summary.truncated) io.stderr(`spillway grep: stopped at ${max} matches (--max)\n`);
  return summary.matches > 0 ? 0 : 1;
}

async function turns(client: S3Client, argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...COMMON, session: { type: 'string' } });
  const loc = oneRoot(values.root);
  const ids = [...positionals, ...(values.session !== undefined ? [values.session] : [])];
  if (ids.length !== 1 || ids[0] === '') throw new UsageError(`expected one SESSION_ID (or --session ID)\n${TURNS_USAGE}`);
  const id = ids[0]!;
  const found = await findRemoteSessions(client, loc, id);
  if (found.length !== 1) {
    io.stderr(found.length === 0 ? human`spillway turns: no session '${id}' under ${s3Url(loc)}\n` : human`spillway turns: '${id}' is a session of ${found.map((f) => f.agent).join(', ')}; give a root that holds one\n`);
    return 1;
  }
  const read = await readRemoteSession(client, loc, found[0]!, { transcript: true });
  if (!read) {
    io.stderr(human`spillway turns: the session '${id}' is gone from ${s3Url(loc)}\n`);
    return 1;
  }
  const { session, calls } = read;
  printTurns(io, session, buildTurnSeries(session.key, calls, session.blobs, session.skipped, session.source), values.json === true);
  return 0;
}

async function clean(client: S3Client, argv: string[], io: CliIO): Promise<number> {
  const { values } = parseFlags(argv, { ...COMMON, session: { type: 'string' }, 'older-than': { type: 'string' }, 'dry-run': { type: 'boolean' }, yes: { type: 'boolean', short: 'y' } }, false);
  const loc = oneRoot(values.root);
  if ((values.session === undefined) === (values['older-than'] === undefined)) throw new UsageError('on an s3:// root, clean takes one of --session ID or --older-than AGE');
  const target: RemoteCleanTarget = values.session !== undefined ? { kind: 'session', sessionId: values.session } : { kind: 'older', beforeMs: Date.now() - parseDuration(values['older-than']!) };
  const plan = await planRemoteClean(client, loc, target);
  const execute = values.yes === true && values['dry-run'] !== true;
  const result = execute ? await executeRemoteClean(client, loc, plan) : undefined;
  if (values.json) {
    json(io, { dryRun: !execute, items: plan.blobs.map((b) => ({ path: s3Url(loc, b.key), bytes: b.bytes, mtime: new Date(b.mtimeMs).toISOString() })), bytes: plan.bytes, ...(result ? { deleted: result.deleted.map((k) => s3Url(loc, k)), failed: result.failed } : {}) });
  } else {
    io.stdout(tableLines(plan.blobs.map((b) => [formatBytes(b.bytes), new Date(b.mtimeMs).toISOString(), s3Url(loc, b.key)])).join(''));
    if (result) {
      for (const f of result.failed) io.stderr(human`spillway clean: failed ${s3Url(loc, f.key)}: ${f.reason}\n`);
      io.stdout(`Deleted ${plan.blobs.length - result.failed.length} blob(s) and their records, ${formatBytes(plan.bytes)}.\n`);
    } else {
      io.stdout(`Would delete ${plan.blobs.length} blob(s) and their records, ${formatBytes(plan.bytes)}.${plan.blobs.length ? ' Run again with --yes to delete.' : ''}\n`);
    }
  }
  return result && result.failed.length > 0 ? 1 : 0;
}
