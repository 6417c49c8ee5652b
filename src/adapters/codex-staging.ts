// The temporary capture folders of Codex calls. Codex's `workspace-write`
// sandbox lets a command write the working folder, /tmp and $TMPDIR but not
// $CODEX_HOME, so the wrapper captures into a private folder the hook (which
// runs outside the sandbox) makes under $TMPDIR or /tmp, one per call; a later
// hook moves the capture to its final path (codex-mover.ts).
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { sanitizeSegment } from '../spill/local-store';

const FOLDER_PREFIX = 'spillway-codex-';
/** Written by the finish step beside a capture whose command has ended: the capture may be moved. */
export const DONE_SUFFIX = '.done';

/** $TMPDIR when it is an absolute path, else /tmp: where the sandbox lets a command write. */
export function stagingRoot(env: NodeJS.ProcessEnv): string {
  const tmp = env.TMPDIR?.trim();
  return tmp && path.isAbsolute(tmp) ? path.resolve(tmp) : '/tmp';
}

/** Every folder of the session starts so; the call id and mkdtemp's random suffix follow. */
function sessionPrefix(sessionId: string): string {
  return `${FOLDER_PREFIX}${sanitizeSegment(sessionId, 100)}--`;
}

function callPrefix(sessionId: string, callId: string): string {
  return `${sessionPrefix(sessionId)}${sanitizeSegment(callId, 100)}--`;
}

/** Makes the call's private folder (mkdtemp: a new name, 0700) and checks what was made. */
export async function makeStagingFolder(env: NodeJS.ProcessEnv, sessionId: string, callId: string): Promise<string> {
  const folder = await fsp.mkdtemp(path.join(stagingRoot(env), callPrefix(sessionId, callId)));
  const why = await whyNotPrivateFolder(folder);
  if (why) throw new Error(`${folder}: ${why}`);
  return folder;
}

/** The session's capture folders under the staging root (names only checked here; whyNotPrivateFolder before use). */
export async function sessionStagingFolders(env: NodeJS.ProcessEnv, sessionId: string): Promise<string[]> {
  const root = stagingRoot(env);
  const prefix = sessionPrefix(sessionId);
  const names = await fsp.readdir(root).catch(() => [] as string[]);
  return names.filter((n) => n.startsWith(prefix)).map((n) => path.join(root, n));
}

export function isCallFolder(folder: string, sessionId: string, callId: string): boolean {
  return path.basename(folder).startsWith(callPrefix(sessionId, callId));
}

/** Why the folder must not be used: not a real folder (a symlink), not this user's, or open to others. */
export async function whyNotPrivateFolder(folder: string): Promise<string | undefined> {
  const st = await fsp.lstat(folder).catch(() => undefined);
  if (!st) return 'missing';
  if (st.isSymbolicLink()) return 'a symlink';
  if (!st.isDirectory()) return 'not a folder';
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `owned by uid ${st.uid}`;
  if ((st.mode & 0o777) !== 0o700) return `mode ${(st.mode & 0o777).toString(8)}, not 700`;
  return undefined;
}
