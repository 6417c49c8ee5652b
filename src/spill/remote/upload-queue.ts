// The local queue of copies owed to an object store: one small private file per
// blob (0600 in a 0700 folder, created exclusively, never through a symlink),
// written before the spill returns and removed only once the remote copy is
// confirmed. A crash, a kill -9 or an outage leaves it for the next run.
// Entries are written synchronously: an agent may exit as soon as the hook
// or event that queues one returns (`opencode run` does at idle), and a write
// behind an await would then be lost with the process.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp, constants as C, linkSync, lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { defaultSpillRoot } from '../default-root';
import { notPrivate } from '../private-folder';

export interface PendingUpload {
  v: 1;
  /** A session transcript (its latest bytes go up, under a fixed key) rather than a content-keyed blob. */
  kind?: 'transcript';
  /** `s3://BUCKET/PREFIX` the copy goes to. */
  store: string;
  /** The local blob (absolute). */
  file: string;
  bytes: number;
  sha256: string;
  agent: string;
  sessionId: string;
  /** The manifest record stored beside the copy. */
  record: Record<string, unknown>;
  /** A transcript's title where its copy does not hold one (Gemini CLI's project folder), stored with the copy. */
  title?: string;
}

/** `$SPILLWAY_UPLOAD_QUEUE`, else `uploads` beside the default spill root (`~/.local/state/spillway/uploads`). */
export function uploadQueueDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SPILLWAY_UPLOAD_QUEUE ? path.resolve(env.SPILLWAY_UPLOAD_QUEUE) : path.join(path.dirname(defaultSpillRoot(env)), 'uploads');
}

const SUFFIX = '.pending.json';

/** The queue folder, made 0700 when missing; refused when it is a symlink or open to others. */
export function ensureQueueDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`upload queue ${dir} is not a folder`);
  const why = notPrivate(st);
  if (why) throw new Error(`upload queue ${dir} ${why}`);
}

export function enqueueUpload(dir: string, item: PendingUpload): string {
  ensureQueueDir(dir);
  const name = `${item.sha256.slice(0, 16)}-${randomBytes(6).toString('hex')}${SUFFIX}`;
  writeEntry(dir, name, item);
  return name;
}

export type PendingTranscript = Pick<PendingUpload, 'store' | 'file' | 'agent' | 'sessionId' | 'title'>;

/**
 * Queues a session's transcript: one entry per store and session (named so it sorts after every blob, which go
 * up first). An entry already queued is left as it is: the uploader sends the file as it is when it gets there.
 */
export function enqueueTranscript(dir: string, item: PendingTranscript): void {
  ensureQueueDir(dir);
  const id = createHash('sha256').update(JSON.stringify([item.store, item.agent, item.sessionId])).digest('hex').slice(0, 24);
  const entry: PendingUpload = { v: 1, kind: 'transcript', ...item, bytes: 0, sha256: '', record: {} };
  try {
    writeEntry(dir, `${TRANSCRIPT_PREFIX}${id}${SUFFIX}`, entry);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** Transcript entries sort after blob entries (hex names). */
const TRANSCRIPT_PREFIX = 'transcript-';

export function isTranscriptEntry(name: string): boolean {
  return name.startsWith(TRANSCRIPT_PREFIX);
}

/** Written beside its name, then linked into place: an uploader never reads an entry half written (EEXIST kept). */
function writeEntry(dir: string, name: string, item: PendingUpload): void {
  const temp = path.join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
  writeFileSync(temp, JSON.stringify(item) + '\n', { flag: 'wx', mode: 0o600 });
  try {
    linkSync(temp, path.join(dir, name));
  } finally {
    rmSync(temp, { force: true });
  }
}

/** The queue's entries, oldest name first; none when the folder does not exist. */
export async function pendingNames(dir: string): Promise<string[]> {
  const names = await fsp.readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  return names.filter((n) => n.endsWith(SUFFIX)).sort();
}

/** One entry, or undefined when it is gone (another uploader finished it) or not a record this version wrote. */
export async function readPending(dir: string, name: string): Promise<PendingUpload | undefined> {
  let text: string;
  try {
    const handle = await fsp.open(path.join(dir, name), C.O_RDONLY | C.O_NOFOLLOW);
    try {
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const item = JSON.parse(text) as PendingUpload;
    return item && item.v === 1 && typeof item.file === 'string' && typeof item.sha256 === 'string' && typeof item.store === 'string' ? item : undefined;
  } catch {
    return undefined;
  }
}

export async function removePending(dir: string, name: string): Promise<void> {
  await fsp.rm(path.join(dir, name), { force: true });
}
