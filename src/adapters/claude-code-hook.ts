// Claude Code's PostToolUse hook: decides what the model sees instead of a
// large tool result (Bash output is taken care of earlier, by the shell prefix:
// claude-code-prefix.sh). Its Stop hook sends the transcript, with the turn's
// closing answer, to a configured bucket. Shared by the command hook
// (`spillway hook claude-code`) and the Agent SDK callbacks. Never throws: any
// failure leaves the tool's own output in place.
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { digestFile, isReadLikeTool } from '../spill/digest';
import { isBelow } from '../spill/inside';
import { LOCAL_RETRIEVAL_HINT, LocalSpillStore } from '../spill/local-store';
import { isMirrored, openSpillStore } from '../spill/open-store';
import { uploadQueuedInBackground } from '../spill/remote/configured';
import { createSpillPolicy, DEFAULT_DIGEST_BYTES, labelFor, MIN_DIGEST_BYTES, type SpillPolicyOptions } from '../spill/policy';
import { normalizeToolName } from '../spill/salience';
import type { SpillLogger } from '../spill/types';
import { classifyOutput, planValueDigest, type StringLeaf } from '../spill/value';
import { claudeSessionDir, claudeSpillDir, parseHookInput, type ClaudeHookEvent, type PostToolUseEvent, type StopEvent } from './claude-code-event';

/** Claude Code spills a replacement over this many chars again (as toolu_<id>.txt). */
export const CLAUDE_CODE_MAX_RESULT_CHARS = 30_000;
/** Claude Code drops hook output over 1 MiB. */
export const CLAUDE_CODE_MAX_HOOK_OUTPUT_BYTES = 1 << 20;
/** Our replacement stays this far under Claude Code's limit (its own wrapping adds a little). */
const REPLACEMENT_CHAR_CAP = CLAUDE_CODE_MAX_RESULT_CHARS - 1_000;

export interface ClaudeCodeSpillOptions {
  /** Results over this many UTF-8 bytes are spilled; default: the engine's. */
  maxInlineBytes?: number;
  /** Size of the digest the model sees; default: the engine's. */
  digestBytes?: number;
  /** Tools never spilled, on top of the engine's read-like tools. */
  protectedTools?: string[];
  logger?: SpillLogger;
  /** Read for SPILLWAY_STORE and the upload queue; default: this process's environment. */
  env?: NodeJS.ProcessEnv;
}

/** Environment overrides for the command hook (the settings.json line stays short). */
export function optionsFromEnv(env: NodeJS.ProcessEnv): Pick<ClaudeCodeSpillOptions, 'maxInlineBytes' | 'digestBytes'> {
  const num = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return undefined;
    const n = Number(raw);
    return Number.isFinite(n) && n > 0 ? Math.floor(n) : undefined;
  };
  const out: Pick<ClaudeCodeSpillOptions, 'maxInlineBytes' | 'digestBytes'> = {};
  const maxInlineBytes = num('SPILLWAY_MAX_INLINE_BYTES');
  const digestBytes = num('SPILLWAY_DIGEST_BYTES');
  if (maxInlineBytes !== undefined) out.maxInlineBytes = maxInlineBytes;
  if (digestBytes !== undefined) out.digestBytes = digestBytes;
  return out;
}

/** The object Claude Code reads from a PostToolUse hook's stdout. */
export interface PostToolUseReplacement {
  hookSpecificOutput: { hookEventName: 'PostToolUse'; updatedToolOutput: unknown };
}

export type HookOutput = PostToolUseReplacement;

/**
 * The whole command hook behind both entry points (`spillway hook claude-code`
 * and dist/hook.js): never throws, the caller exits 0.
 */
export async function runClaudeCodeHook(
  stdin: string,
  env: NodeJS.ProcessEnv,
  out: { stdout: (text: string) => void; stderr: (text: string) => void },
): Promise<void> {
  try {
    const line = await handleClaudeCodeHookInput(stdin, { env, logger: { warn: (m) => out.stderr(`spillway: ${m}\n`) } });
    if (line !== undefined) out.stdout(line);
  } catch (err) {
    out.stderr(`spillway: hook failed, tool output left unchanged: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  // The result is out: copies owed to a bucket go up in a process of their own.
  await uploadQueuedInBackground(env);
}

/**
 * The command hook: stdin text in, the line to print out (or undefined: print
 * nothing, Claude Code keeps the tool's own input and output).
 */
export async function handleClaudeCodeHookInput(
  stdin: string,
  options: ClaudeCodeSpillOptions & { env?: NodeJS.ProcessEnv } = {},
): Promise<string | undefined> {
  const parsed = parseHookInput(stdin);
  if (!parsed.ok) {
    if (parsed.kind === 'invalid') options.logger?.warn(`ignored hook input: ${parsed.reason}`);
    return undefined;
  }
  const output = await hookOutputFor(parsed.event, { ...optionsFromEnv(options.env ?? {}), ...options });
  if (output === undefined) return undefined;
  const line = JSON.stringify(output);
  if (Buffer.byteLength(line, 'utf8') >= CLAUDE_CODE_MAX_HOOK_OUTPUT_BYTES) {
    options.logger?.warn('hook output over 1 MiB; left the tool unchanged');
    return undefined;
  }
  return line;
}

/** What to answer one event with, or undefined: leave the tool's input and output alone (and, at Stop, the turn ended). */
export async function hookOutputFor(event: ClaudeHookEvent, options: ClaudeCodeSpillOptions = {}): Promise<HookOutput | undefined> {
  // Never an answer at Stop: any decision there could make the model go on.
  if (event.hook_event_name === 'Stop') {
    queueAtTurnEnd(event, options);
    return undefined;
  }
  try {
    // Only PostToolUse is Spillway's (an SDK user may register the callback for more).
    if (event.hook_event_name !== 'PostToolUse') return undefined;
    return await replacementFor(event, options);
  } catch (err) {
    options.logger?.warn(`${event.tool_name} left unchanged: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

function postToolUseOutput(updated: unknown): PostToolUseReplacement | undefined {
  if (JSON.stringify(updated).length > REPLACEMENT_CHAR_CAP) return undefined;
  return { hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: updated } };
}

/** The hook output for one event, or undefined when the model should see the tool's own output. */
export async function replacementFor(event: PostToolUseEvent, options: ClaudeCodeSpillOptions = {}): Promise<PostToolUseReplacement | undefined> {
  try {
    const updated = await updatedToolOutput(event, options);
    if (updated === undefined) return undefined;
    const output = postToolUseOutput(updated);
    if (!output) options.logger?.warn(`digest of ${event.tool_name} output is over ${REPLACEMENT_CHAR_CAP} chars; left unchanged`);
    return output;
  } catch (err) {
    options.logger?.warn(`${event.tool_name} output left unchanged: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/**
 * The session's store. Root = the session folder, so both our blobs (spillway/) and Claude Code's own files
 * (tool-results/) lie inside it and nothing can escape it.
 */
function sessionStore(event: ClaudeHookEvent, options: ClaudeCodeSpillOptions): LocalSpillStore {
  const spillDir = claudeSpillDir(event);
  return openSpillStore({ root: claudeSessionDir(event), layout: { dirFor: () => spillDir }, agent: 'claude-code', env: options.env ?? process.env, ...(options.logger ? { logger: options.logger } : {}) });
}

/**
 * A session with copies in a bucket sends its transcript too, re-sent as it grows: after each hooked call and at
 * the end of each turn, so the bucket's copy ends with the closing answer. A session without blobs sends nothing.
 */
function queueTranscript(store: LocalSpillStore, event: ClaudeHookEvent): void {
  if (isMirrored(store) && (store.queued > 0 || existsSync(claudeSpillDir(event)))) store.queueTranscript(event.session_id, event.transcript_path);
}

function queueAtTurnEnd(event: StopEvent, options: ClaudeCodeSpillOptions): void {
  try {
    queueTranscript(sessionStore(event, options), event);
  } catch (err) {
    options.logger?.warn(`transcript not queued at the turn's end: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function updatedToolOutput(event: PostToolUseEvent, options: ClaudeCodeSpillOptions): Promise<unknown> {
  const store = sessionStore(event, options);
  try {
    return await outputThrough(store, event, claudeSessionDir(event), claudeSpillDir(event), options);
  } finally {
    queueTranscript(store, event);
  }
}

async function outputThrough(store: LocalSpillStore, event: PostToolUseEvent, sessionDir: string, spillDir: string, options: ClaudeCodeSpillOptions): Promise<unknown> {
  const policyOptions: SpillPolicyOptions = {
    store,
    ...(options.maxInlineBytes !== undefined ? { maxInlineBytes: options.maxInlineBytes } : {}),
    ...(options.digestBytes !== undefined ? { digestBytes: options.digestBytes } : {}),
    ...(options.protectedTools ? { protectedTools: options.protectedTools } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  };
  if (isImageResponse(event.tool_response)) return undefined;
  const persisted = persistedOutput(event.tool_response);
  if (persisted) {
    if (isReadLikeTool(event.tool_name) || isProtected(event.tool_name, options.protectedTools)) return undefined;
    // Claude Code writes these under the session's tool-results/; anything
    // else is not a file this hook should read or point the model at.
    if (!isBelow(sessionDir, persisted.filePath)) {
      options.logger?.warn(`persisted output ${persisted.filePath} is outside the session folder; left unchanged`);
      return undefined;
    }
    return digestPersisted(event, persisted, store, spillDir, policyOptions, options);
  }
  const decision = await createSpillPolicy(policyOptions).apply({
    sessionId: event.session_id,
    toolName: event.tool_name,
    toolCallId: event.tool_use_id,
    args: event.tool_input,
    output: event.tool_response,
  });
  return decision.spilled ? decision.output : undefined;
}

/** Bash reports image output (base64 in stdout) with `isImage: true`: cutting it would corrupt it. */
function isImageResponse(response: unknown): boolean {
  return typeof response === 'object' && response !== null && (response as { isImage?: unknown }).isImage === true;
}

function isProtected(toolName: string, protectedTools: string[] | undefined): boolean {
  const name = normalizeToolName(toolName);
  return (protectedTools ?? []).some((t) => normalizeToolName(t) === name);
}

interface PersistedOutput {
  response: Record<string, unknown>;
  filePath: string;
}

/** Bash output Claude Code already wrote to tool-results/b<id>.txt (stdin then carries only its first 30,000 chars). */
function persistedOutput(response: unknown): PersistedOutput | undefined {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return undefined;
  const r = response as Record<string, unknown>;
  if (typeof r.persistedOutputPath !== 'string' || !path.isAbsolute(r.persistedOutputPath)) return undefined;
  if (typeof r.stdout !== 'string') return undefined;
  return { response: r, filePath: r.persistedOutputPath };
}

/**
 * Digest Claude Code's own file (head, failure lines, tail; streamed, never
 * loaded whole) and point at it; no copy is made. The manifest records the
 * file so the catalog can name its tool and command.
 *
 * The digest budget is water-filled across stdout (sized as the whole file)
 * and the response's other string fields, as the engine does for any JSON
 * result: a short stderr stays whole, a large one gets its share and goes
 * through the spill policy (its full text into a blob of its own, its digest
 * from `digestValue`), so the replacement stays under Claude Code's limits.
 *
 * persistedOutputPath/persistedOutputSize are left out of the replacement on
 * purpose: with them Claude Code shows the replacement's stdout inside its own
 * `<persisted-output>` block cut to a 2 KB "Preview (first 2KB)", so a larger
 * digest loses its tail again (docs/adapters.md). Without them the model sees
 * the digest, whose notice names the same file, its size and how to read it.
 */
async function digestPersisted(
  event: PostToolUseEvent,
  persisted: PersistedOutput,
  store: LocalSpillStore,
  spillDir: string,
  policyOptions: SpillPolicyOptions,
  options: ClaudeCodeSpillOptions,
): Promise<unknown> {
  const { filePath, response } = persisted;
  const st = await fsp.lstat(filePath);
  if (!st.isFile()) throw new Error(`persisted output is not a regular file: ${filePath}`);
  const { persistedOutputPath: _path, persistedOutputSize: _size, stdout: _stdout, ...others } = response;
  const budget = Math.max(MIN_DIGEST_BYTES, options.digestBytes ?? DEFAULT_DIGEST_BYTES);
  const { stdoutShare, othersShare } = splitPersistedBudget(others, st.size, budget);
  let hint = LOCAL_RETRIEVAL_HINT;
  try {
    const ref = await store.recordExternal({
      owner: { sessionId: event.session_id },
      source: { toolName: event.tool_name, callId: event.tool_use_id, label: labelFor(event.tool_input) },
      file: path.relative(spillDir, filePath),
      args: event.tool_input,
    });
    // A mirrored store names the bucket's copy too.
    hint = ref.retrievalHint;
  } catch (err) {
    // The digest still helps the model; only the catalog loses the tool name.
    options.logger?.warn(`could not record ${filePath} in the manifest: ${err instanceof Error ? err.message : String(err)}`);
  }
  const digest = await digestFile(filePath, {
    budgetBytes: stdoutShare,
    toolName: event.tool_name,
    locator: filePath,
    retrievalHint: hint,
  });
  let rest: unknown = others;
  if (othersShare !== undefined) {
    // The threshold is the share itself: the plan already decided these fields must be cut.
    const decision = await createSpillPolicy({ ...policyOptions, maxInlineBytes: othersShare, digestBytes: othersShare }).apply({
      sessionId: event.session_id,
      toolName: event.tool_name,
      toolCallId: event.tool_use_id,
      args: event.tool_input,
      output: others,
    });
    rest = decision.output;
  }
  return { ...(rest as Record<string, unknown>), stdout: digest };
}

/**
 * The engine's water-filling over stdout (as large as the persisted file) and
 * the other string fields. `othersShare` is set only when some other field
 * must be cut: it is the budget those fields share.
 */
function splitPersistedBudget(others: Record<string, unknown>, fileBytes: number, budget: number): { stdoutShare: number; othersShare?: number } {
  const shape = classifyOutput(others);
  if (shape.kind !== 'value' || shape.leaves.length === 0) return { stdoutShare: budget };
  const stdoutLeaf: StringLeaf = { path: ['stdout'], value: '', bytes: fileBytes, index: shape.leaves.length };
  const plan = planValueDigest([...shape.leaves, stdoutLeaf], budget);
  const cutOthers = plan.digested.filter((d) => d.leaf !== stdoutLeaf).length + plan.emptied.filter((l) => l !== stdoutLeaf).length;
  const ownShare = plan.digested.find((d) => d.leaf === stdoutLeaf)?.share;
  // Whole: the file fits (digestFile returns it as is). Emptied (a tiny budget
  // and an even larger other field): stdout still gets half, it names the file.
  const stdoutShare = ownShare ?? (plan.whole.includes(stdoutLeaf) ? fileBytes : Math.floor(budget / 2));
  if (cutOthers === 0) return { stdoutShare };
  return { stdoutShare, othersShare: Math.max(MIN_DIGEST_BYTES, budget - stdoutShare) };
}
