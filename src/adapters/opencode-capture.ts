// One opencode bash call's capture, from its start (the shell's environment)
// to what the model sees (a digest of the whole output, with the exit code and
// the path of the whole output, or opencode's own text when it is small).
// Captures live in `<XDG_DATA_HOME>/opencode/spillway/<session>/<call>.log`
// with Spillway's manifest beside them; a capture that is not kept is deleted.
import { constants as C, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { digestFile } from '../spill/digest';
import { sanitizeSegment, type LocalSpillStore } from '../spill/local-store';
import { isMirrored, openSpillStore } from '../spill/open-store';
import { DEFAULT_DIGEST_BYTES, DEFAULT_MAX_INLINE_BYTES, labelFor } from '../spill/policy';
import { uploadQueuedInBackground } from '../spill/remote/configured';
import { notPrivate } from '../spill/private-folder';
import { countLines } from '../spill/text';
import { CAPTURE_FILE_VAR, CAPTURE_SCRIPT, DONE_SUFFIX, USER_BASH_ENV_VAR } from './opencode-capture-script';

export interface OpencodeCaptureOptions {
  /** Folder of the session folders (default `<XDG_DATA_HOME>/opencode/spillway`). */
  root: string;
  /** Outputs above this many bytes become a digest. */
  maxInlineBytes: number;
  /** Most bytes the digest takes. */
  digestBytes: number;
  /** How long to wait for the capture's last byte once opencode reports the call done. */
  settleMs: number;
  /** Where SPILLWAY_STORE and the upload queue are read from. */
  env: NodeJS.ProcessEnv;
}

export function opencodeCaptureDefaults(env: NodeJS.ProcessEnv = process.env): OpencodeCaptureOptions {
  const xdg = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(env.HOME || os.homedir(), '.local', 'share');
  return { root: path.join(xdg, 'opencode', 'spillway'), maxInlineBytes: DEFAULT_MAX_INLINE_BYTES, digestBytes: DEFAULT_DIGEST_BYTES, settleMs: 5000, env };
}

export interface Capture {
  sessionId: string;
  callId: string;
  file: string;
}

/** Makes `dir` (and its parents) 0700 if missing; refuses one that is a symlink or not this user's alone. */
export async function privateFolder(dir: string): Promise<void> {
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await fsp.lstat(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a folder`);
  const why = notPrivate(st);
  if (why) throw new Error(`${dir} ${why}`);
}

/** The BASH_ENV script, written once per content (its name carries a hash of it). */
async function scriptPath(root: string): Promise<string> {
  const { createHash } = await import('node:crypto');
  const file = path.join(root, `capture-${createHash('sha256').update(CAPTURE_SCRIPT).digest('hex').slice(0, 12)}.sh`);
  try {
    await fsp.writeFile(file, CAPTURE_SCRIPT, { mode: 0o600, flag: C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const st = await fsp.lstat(file);
    if (!st.isFile() || (await fsp.readFile(file, 'utf8')) !== CAPTURE_SCRIPT) throw new Error(`${file} is not Spillway's capture script`);
  }
  return file;
}

/**
 * Creates the capture file (0600, exclusively, never through a symlink) and
 * returns the environment that makes bash fill it. Called by `shell.env`,
 * which opencode runs only once the call's permission was granted.
 */
export async function startCapture(opts: OpencodeCaptureOptions, sessionId: string, callId: string, env: NodeJS.ProcessEnv): Promise<{ capture: Capture; env: Record<string, string> }> {
  await privateFolder(opts.root);
  const script = await scriptPath(opts.root);
  const dir = path.join(opts.root, sanitizeSegment(sessionId));
  await privateFolder(dir);
  const file = path.join(dir, `${sanitizeSegment(callId, 200)}.log`);
  const handle = await fsp.open(file, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  await handle.close();
  const shellEnv: Record<string, string> = { BASH_ENV: script, [CAPTURE_FILE_VAR]: file };
  if (env.BASH_ENV) shellEnv[USER_BASH_ENV_VAR] = env.BASH_ENV;
  return { capture: { sessionId, callId, file }, env: shellEnv };
}

/** What `tool.execute.after` sees of a bash call. */
export interface FinishedCall {
  command: string;
  /** opencode's exit code: null when it stopped the command (timeout, abort). */
  exit: number | null | undefined;
  /** What opencode is about to hand the model. */
  shown: string;
}

/** opencode shows an output of at most this many lines whole (its default `tool_output.max_lines`). */
const OPENCODE_WHOLE_LINES = 2000;

/**
 * The text the model sees instead of opencode's: a digest of a big output, or
 * a small output whole when opencode lost its end. Undefined to leave
 * opencode's alone (a small output it shows whole, a stopped command, a
 * capture bash did not fill or that is still being written). A capture not
 * kept is deleted.
 */
export async function finishCapture(opts: OpencodeCaptureOptions, capture: Capture, call: FinishedCall): Promise<string | undefined> {
  const done = await waitForFile(capture.file + DONE_SUFFIX, opts.settleMs);
  let keep = false;
  try {
    if (!done || typeof call.exit !== 'number') return undefined;
    const st = await fsp.lstat(capture.file);
    if (!st.isFile()) return undefined;
    if (st.size <= opts.maxInlineBytes) return lostEnd(await fsp.readFile(capture.file, 'utf8'), call.shown);
    // Recorded in the session's manifest through the configured store: with SPILLWAY_STORE=s3://… its copy is
    // queued for the bucket too, and the hint names it.
    const store = sessionStore(opts, path.dirname(capture.file));
    const ref = await store.recordExternal({
      owner: { sessionId: capture.sessionId },
      source: { toolName: 'bash', callId: capture.callId, label: labelFor({ command: call.command }) },
      file: path.basename(capture.file),
      args: { command: call.command },
    });
    keep = true;
    const digest = await digestFile(capture.file, {
      budgetBytes: opts.digestBytes,
      toolName: 'bash',
      locator: capture.file,
      retrievalHint: ref.retrievalHint,
    });
    await uploadQueuedInBackground(opts.env);
    return `${digest}${digest.endsWith('\n') ? '' : '\n'}[spillway: the command exited with code ${call.exit}; its complete output (stdout and stderr) is in ${capture.file}]\n`;
  } finally {
    await fsp.rm(capture.file + DONE_SUFFIX, { force: true });
    if (!keep) await fsp.rm(capture.file, { force: true });
  }
}

/** The store of one session folder (its manifest, and with SPILLWAY_STORE=s3://… the bucket's copies). */
function sessionStore(opts: OpencodeCaptureOptions, dir: string): LocalSpillStore {
  return openSpillStore({ root: opts.root, layout: { dirFor: () => dir }, agent: 'opencode', env: opts.env });
}

/**
 * A session with copies in a bucket sends the plugin's record of its API calls too (`file`, in the session's
 * folder: its turns), queued again after each call as it grows.
 */
export async function queueCallsRecord(opts: OpencodeCaptureOptions, sessionId: string, file: string): Promise<void> {
  const store = sessionStore(opts, path.dirname(file));
  if (isMirrored(store) && store.queueTranscriptIfSpilled(sessionId, file)) await uploadQueuedInBackground(opts.env);
}

/**
 * A small output as opencode would have shown it whole, when what it shows is
 * missing the end (it stops reading when the shell exits, and can miss the
 * last bytes); undefined when it shows the output as it is.
 */
function lostEnd(whole: string, shown: string): string | undefined {
  if (countLines(whole) > OPENCODE_WHOLE_LINES) return undefined;
  const expected = whole === '' ? '(no output)' : whole;
  if (shown === expected) return undefined;
  return shown === '(no output)' || expected.startsWith(shown) ? expected : undefined;
}

async function waitForFile(file: string, ms: number): Promise<boolean> {
  for (let waited = 0; ; waited += 20) {
    try {
      await fsp.access(file);
      return true;
    } catch {
      if (waited >= ms) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
