// Gemini CLI's AfterTool and AfterAgent command hooks. AfterTool: a shell command's output over the
// threshold is written whole to a private blob in Gemini's own spill folder
// (`<project temp>/tool-outputs/session-<id>/`, recorded in Spillway's
// manifest), its digest (head, failure lines, tail, Gemini's exit code line,
// the blob's path) to a file beside it, and the hook asks Gemini to read that
// file as a follow-up call (`tailToolCallRequest`), whose result replaces the
// original one. Nothing is rewritten before the command runs, so Gemini's
// policy and approval rules judge the command as the model wrote it, and a
// denied command never reaches this hook. Never throws: on any failure the
// hook answers nothing and the model gets Gemini's own output. AfterAgent
// (each turn's end) only sends the session file to a bucket, closing answer
// included, and answers nothing.
import { randomBytes } from 'node:crypto';
import { constants as C, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { digestText } from '../spill/digest';
import { LOCAL_RETRIEVAL_HINT, sanitizeSegment, type LocalSpillStore } from '../spill/local-store';
import { isMirrored, openSpillStore } from '../spill/open-store';
import { DEFAULT_DIGEST_BYTES, DEFAULT_MAX_INLINE_BYTES, labelFor, MIN_DIGEST_BYTES } from '../spill/policy';
import { utf8Bytes } from '../spill/text';
import { parseShellContent, shellContentWith } from './gemini-cli-shell-output';

export const GEMINI_SHELL_TOOL = 'run_shell_command';
/** How the digest's notice tells Gemini's model to read more (its own tool names and parameters). */
export const GEMINI_RETRIEVAL_HINT = 'Use read_file with start_line/end_line on this path, or grep_search it to search within it.';
/** The digest files the follow-up read_file reads; hidden from the catalog (`.spillway*`). */
export const DIGEST_PREFIX = '.spillway-digest-';
/** A digest file is read right after the hook answers; older ones are removed by later calls. */
const DIGEST_KEPT_MS = 60 * 60 * 1000;

export interface GeminiHookOptions {
  /** Outputs over this many UTF-8 bytes are spilled; default: the engine's. */
  maxInlineBytes?: number;
  /** Size of the digest of the output; default: the engine's. */
  digestBytes?: number;
  warn?: (message: string) => void;
}

/** The fields every Gemini CLI hook event carries. */
export interface GeminiSessionEvent {
  session_id: string;
  transcript_path: string;
  cwd: string;
  hook_event_name: string;
}

export interface AfterToolEvent extends GeminiSessionEvent {
  tool_name: string;
  tool_input: Record<string, unknown>;
  tool_response: { llmContent?: unknown; returnDisplay?: unknown; error?: unknown };
}

/** The object Gemini CLI reads from an AfterTool hook's stdout. */
export interface TailCallAnswer {
  hookSpecificOutput: { hookEventName: 'AfterTool'; tailToolCallRequest: { name: 'read_file'; args: { file_path: string } } };
}

export function geminiOptionsFromEnv(env: NodeJS.ProcessEnv): GeminiHookOptions {
  const num = (name: string): number | undefined => {
    const n = Number(env[name]);
    return env[name]?.trim() && Number.isFinite(n) && n > 0 ? Math.floor(n) : undefined;
  };
  const maxInlineBytes = num('SPILLWAY_MAX_INLINE_BYTES');
  const digestBytes = num('SPILLWAY_DIGEST_BYTES');
  return { ...(maxInlineBytes !== undefined && { maxInlineBytes }), ...(digestBytes !== undefined && { digestBytes }) };
}

/** The whole hook: stdin text in, the line to print (or undefined: print nothing). Never throws. */
export async function handleGeminiHookInput(stdin: string, options: GeminiHookOptions = {}): Promise<string | undefined> {
  try {
    const event = parseEvent(stdin);
    if (!event) return undefined;
    // The turn's closing answer is in the session file only now, after its last shell call: it goes up once more.
    if (!isAfterTool(event)) {
      queueSessionFile(event, options);
      return undefined;
    }
    const answer = await afterToolAnswer(event, options);
    queueSessionFile(event, options);
    return answer && JSON.stringify(answer);
  } catch (err) {
    options.warn?.(`output left unchanged: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/** An AfterTool event, or an AfterAgent one (its prompt and answer are not read); undefined for anything else. */
function parseEvent(stdin: string): AfterToolEvent | GeminiSessionEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(stdin);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const e = value as Partial<AfterToolEvent>;
  if (typeof e.session_id !== 'string') return undefined;
  if (e.hook_event_name === 'AfterAgent') return e as GeminiSessionEvent;
  if (e.hook_event_name !== 'AfterTool' || typeof e.tool_name !== 'string') return undefined;
  if (typeof e.tool_response !== 'object' || e.tool_response === null) return undefined;
  return e as AfterToolEvent;
}

function isAfterTool(event: AfterToolEvent | GeminiSessionEvent): event is AfterToolEvent {
  return event.hook_event_name === 'AfterTool';
}

/** What to answer one AfterTool event with, or undefined: the model gets Gemini's own output. */
export async function afterToolAnswer(event: AfterToolEvent, options: GeminiHookOptions = {}): Promise<TailCallAnswer | undefined> {
  if (event.tool_name !== GEMINI_SHELL_TOOL || event.tool_response.error) return undefined;
  const text = event.tool_response.llmContent;
  if (typeof text !== 'string') return undefined;
  const content = parseShellContent(text, event.tool_response.returnDisplay);
  if (!content || utf8Bytes(content.output) <= (options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES)) return undefined;
  const projectTemp = projectTempDir(event.transcript_path);
  if (!projectTemp) {
    options.warn?.('no transcript path in the event, so no folder Gemini lets read_file read; output left unchanged');
    return undefined;
  }
  const { sessionDir, store } = sessionStore(projectTemp, event.session_id, options);
  // Gemini gives hooks no call id: one of our own, ordered by time.
  const callId = `${Date.now()}-${randomBytes(4).toString('hex')}`;
  const ref = await store.saveText({
    owner: { sessionId: event.session_id },
    source: { toolName: event.tool_name, callId, label: labelFor(event.tool_input) },
    suggestedName: `${event.tool_name}-${callId}.txt`,
    content: content.output,
    args: event.tool_input,
  });
  const digest = digestText(content.output, {
    budgetBytes: Math.max(MIN_DIGEST_BYTES, options.digestBytes ?? DEFAULT_DIGEST_BYTES),
    toolName: event.tool_name,
    locator: ref.locator,
    // Gemini's own tools in place of the local store's words; a mirrored store's hint goes on to name the bucket's copy.
    retrievalHint: ref.retrievalHint.replace(LOCAL_RETRIEVAL_HINT, GEMINI_RETRIEVAL_HINT),
  });
  const digestPath = path.join(sessionDir, `${DIGEST_PREFIX}${path.basename(ref.locator)}`);
  await writePrivate(digestPath, shellContentWith(content, digest, ref.locator));
  await pruneDigests(sessionDir, digestPath);
  return { hookSpecificOutput: { hookEventName: 'AfterTool', tailToolCallRequest: { name: 'read_file', args: { file_path: digestPath } } } };
}

/** The session's blob folder in Gemini's own spill folder, and the store that writes and records its blobs. */
function sessionStore(projectTemp: string, sessionId: string, options: GeminiHookOptions): { sessionDir: string; store: LocalSpillStore } {
  const sessionDir = path.join(projectTemp, 'tool-outputs', `session-${sanitizeSegment(sessionId)}`);
  const store = openSpillStore({ root: projectTemp, layout: { dirFor: () => sessionDir }, agent: 'gemini-cli', ...(options.warn && { logger: { warn: options.warn } }) });
  return { sessionDir, store };
}

/**
 * A session with copies in a bucket sends its session file too (its turns, and the digests that tie each blob to
 * its call), queued again after each shell call as it grows (a digest enters it only after its hook answered) and
 * at each turn's end.
 */
function queueSessionFile(event: GeminiSessionEvent, options: GeminiHookOptions): void {
  const projectTemp = projectTempDir(event.transcript_path);
  if (!projectTemp) return;
  const { store } = sessionStore(projectTemp, event.session_id, options);
  // The session file does not name the project: its folder's name, the session's title in the folder, goes along.
  if (isMirrored(store)) store.queueTranscriptIfSpilled(event.session_id, event.transcript_path, path.basename(projectTemp));
}

/**
 * Gemini's project temp folder (`~/.gemini/tmp/<project>`), the one outside the
 * workspace its read_file may read: the parent of the transcript's `chats`
 * folder (`chats/<file>`, or `chats/<parent session>/<file>` for a subagent).
 */
export function projectTempDir(transcriptPath: unknown): string | undefined {
  if (typeof transcriptPath !== 'string' || !path.isAbsolute(transcriptPath)) return undefined;
  const parts = path.resolve(transcriptPath).split(path.sep);
  const chats = parts.lastIndexOf('chats');
  if (chats < 2 || chats > parts.length - 2) return undefined;
  return parts.slice(0, chats).join(path.sep);
}

/** 0600, created exclusively, never through a symlink. */
async function writePrivate(file: string, text: string): Promise<void> {
  const handle = await fsp.open(file, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(text, 'utf8');
  } finally {
    await handle.close();
  }
}

/** Removes digest files left by earlier calls (each was read right after its hook answered). */
async function pruneDigests(dir: string, keep: string): Promise<void> {
  const cutoff = Date.now() - DIGEST_KEPT_MS;
  for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
    const file = path.join(dir, name);
    if (!name.startsWith(DIGEST_PREFIX) || file === keep) continue;
    const st = await fsp.lstat(file).catch(() => undefined);
    if (st?.isFile() && st.mtimeMs < cutoff) await fsp.rm(file, { force: true });
  }
}
