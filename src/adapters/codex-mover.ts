// Moves finished Codex captures from their temporary folder (codex-staging.ts)
// to `<CODEX_HOME>/spillway/<session>/bash-<call id>.txt` and records them in
// the session's manifest. Runs in Codex's hooks, outside the sandbox: for the
// call just ended (PostToolUse) and, as a catch-up, at every hook of the
// session, so a capture whose hook never ran is moved by the next one.
// The temporary folder is writable by the sandboxed command, so nothing in it
// is trusted: folders are checked (real, ours, 0700), files opened without
// following symlinks, and the final name is made here from the session id.
import { constants as C, promises as fsp, type Stats } from 'node:fs';
import * as path from 'node:path';
import { sanitizeSegment } from '../spill/local-store';
import { isMirrored } from '../spill/open-store';
import { labelFor } from '../spill/policy';
import { uploadQueuedInBackground } from '../spill/remote/configured';
import type { SpillLogger } from '../spill/types';
import { CODEX_SPILL_FOLDER, captureFileName, codexCaptureLocation, codexSessionStore } from './codex-final-path';
import { DONE_SUFFIX, isCallFolder, sessionStagingFolders, whyNotPrivateFolder } from './codex-staging';

/** An empty folder no hook claimed (a refused command whose PostToolUse never came) goes after this long. */
const STALE_FOLDER_MS = 60 * 60 * 1000;
/** A done marker holds the command; Spillway never wraps one over 60 KB. */
const MAX_MARKER_BYTES = 1024 * 1024;

export interface CodexMoveOptions {
  env: NodeJS.ProcessEnv;
  codexHome: string;
  sessionId: string;
  /** The call whose PostToolUse this is: its folder goes even when it is empty and young. */
  callId?: string;
  /** The session's rollout file (the event's `transcript_path`): with a bucket, it travels with the blobs. */
  transcript?: string;
  logger?: SpillLogger;
}

/** Moves every finished capture of the session; returns the final paths. Never throws. */
export async function moveCodexCaptures(opts: CodexMoveOptions): Promise<string[]> {
  const moved: string[] = [];
  for (const folder of await sessionStagingFolders(opts.env, opts.sessionId)) {
    try {
      moved.push(...(await moveFolder(folder, opts)));
    } catch (err) {
      opts.logger?.warn(`could not move the captures of ${folder}: ${(err as Error).message}`);
    }
  }
  const rollout = queueRollout(opts);
  // The manifest now names them: copies owed to a bucket go up in a process of their own.
  if (moved.length > 0 || rollout) await uploadQueuedInBackground(opts.env);
  return moved;
}

/**
 * A session with copies in a bucket sends its rollout too (its turns and API calls), queued again at each hook as
 * it grows. True when queued.
 */
function queueRollout(opts: CodexMoveOptions): boolean {
  if (!opts.transcript) return false;
  const sessionDir = path.join(opts.codexHome, CODEX_SPILL_FOLDER, sanitizeSegment(opts.sessionId));
  const store = codexSessionStore(path.dirname(sessionDir), sessionDir, opts.logger);
  return isMirrored(store) && store.queueTranscriptIfSpilled(path.basename(sessionDir), opts.transcript);
}

async function moveFolder(folder: string, opts: CodexMoveOptions): Promise<string[]> {
  const why = await whyNotPrivateFolder(folder);
  if (why) throw new Error(`not a private capture folder (${why})`);
  const moved: string[] = [];
  let finished = 0;
  for (const name of await fsp.readdir(folder)) {
    if (!name.endsWith(DONE_SUFFIX)) continue;
    const capture = name.slice(0, -DONE_SUFFIX.length);
    const final = path.join(opts.codexHome, CODEX_SPILL_FOLDER, sanitizeSegment(opts.sessionId), capture);
    const where = codexCaptureLocation(final);
    // A folder holds its own call's capture only: the name says which call it was made for.
    if (!where || captureFileName(where.callId) !== capture || !isCallFolder(folder, opts.sessionId, where.callId)) continue;
    const placed = await moveCapture(folder, capture, final, opts);
    finished++;
    if (placed) moved.push(placed);
  }
  const left = await fsp.readdir(folder);
  if (left.length === 0 && (finished > 0 || (opts.callId !== undefined && isCallFolder(folder, opts.sessionId, opts.callId)) || (await isStale(folder)))) {
    await fsp.rmdir(folder).catch(() => undefined);
  }
  return moved;
}

async function isStale(folder: string): Promise<boolean> {
  const st = await fsp.lstat(folder).catch(() => undefined);
  return st !== undefined && Date.now() - st.mtimeMs > STALE_FOLDER_MS;
}

/** One capture: to its final path (a hard link, or an exclusive copy across file systems), recorded, its marker gone. */
async function moveCapture(folder: string, name: string, final: string, opts: CodexMoveOptions): Promise<string | undefined> {
  const where = codexCaptureLocation(final)!;
  const marker = path.join(folder, `${name}${DONE_SUFFIX}`);
  const source = path.join(folder, name);
  if (!(await lstatOrUndefined(source)) && !(await lstatOrUndefined(final))) {
    // The wrapper printed the output whole and removed it (a finish step that failed late): only the marker is left.
    await fsp.unlink(marker);
    return undefined;
  }
  const command = await readMarkerCommand(marker);
  const store = codexSessionStore(where.root, where.sessionDir, opts.logger);
  // The store makes the session folder (0700, never through a symlink); its probe file goes at once.
  await fsp.unlink(await store.createEmpty({ sessionId: where.sessionId }, `.probe-${process.pid}-${name}`));
  await placeFile(source, final);
  await store.recordExternal({
    owner: { sessionId: where.sessionId },
    source: { toolName: 'Bash', callId: where.callId, label: labelFor({ command }) },
    file: name,
    args: { command },
  });
  await fsp.unlink(marker);
  return final;
}

async function readMarkerCommand(marker: string): Promise<string> {
  const handle = await fsp.open(marker, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > MAX_MARKER_BYTES) throw new Error(`not a done marker: ${marker}`);
    const value = JSON.parse(await handle.readFile('utf8')) as { command?: unknown };
    if (typeof value?.command !== 'string') throw new Error(`done marker without a command: ${marker}`);
    return value.command;
  } finally {
    await handle.close();
  }
}

/**
 * Puts the regular file at `source` at `final` (which must not exist) and
 * removes `source`. A symlink at either path is never followed; a file
 * already moved (same inode at `final`, or `source` gone) is left as it is.
 */
export async function placeFile(source: string, final: string): Promise<void> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(source, C.O_RDONLY | C.O_NOFOLLOW);
  } catch (err) {
    // Moved by an earlier hook that stopped before its record: record what is there.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (await lstatOrUndefined(final))?.isFile()) return;
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`not a regular file: ${source}`);
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) throw new Error(`owned by uid ${st.uid}: ${source}`);
    if (st.nlink !== 1 && !sameFile(await lstatOrUndefined(final), st)) throw new Error(`has other links: ${source}`);
    await handle.chmod(0o600);
    try {
      await fsp.link(source, final);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && sameFile(await lstatOrUndefined(final), st)) {
        // Linked by an earlier hook: only the source is left to remove.
      } else if (code === 'EXDEV' || code === 'EPERM') {
        await copyExclusively(handle, final);
        await fsp.unlink(source);
        return;
      } else throw err;
    }
    // `source` could have been swapped between the open and the link: the link must be the file opened.
    if (!sameFile(await lstatOrUndefined(final), st)) {
      await fsp.unlink(final).catch(() => undefined);
      throw new Error(`${source} changed while it was moved`);
    }
    await fsp.unlink(source);
  } finally {
    await handle.close();
  }
}

async function copyExclusively(from: fsp.FileHandle, final: string): Promise<void> {
  const to = await fsp.open(final, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  try {
    const buffer = Buffer.alloc(1 << 20);
    for (let at = 0; ; ) {
      const { bytesRead } = await from.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) break;
      await to.write(buffer, 0, bytesRead);
      at += bytesRead;
    }
    await to.close();
  } catch (err) {
    await to.close().catch(() => undefined);
    await fsp.unlink(final).catch(() => undefined);
    throw err;
  }
}

function sameFile(a: Stats | undefined, b: Stats): boolean {
  return a !== undefined && a.isFile() && a.ino === b.ino && a.dev === b.dev;
}

async function lstatOrUndefined(file: string): Promise<Stats | undefined> {
  return fsp.lstat(file).catch(() => undefined);
}
