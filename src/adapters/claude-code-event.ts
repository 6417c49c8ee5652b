// What Claude Code sends its hooks (PostToolUse and Stop, which Spillway acts
// on; PreToolUse and PostToolUseFailure, which an SDK program may route to the
// same callback and which are recognised so they can be left alone), checked
// before anything acts on it, and where that session's files live.
import * as path from 'node:path';

/** The fields every tool event carries; Claude Code sends more (prompt_id, effort, ...), which are ignored. */
interface ToolEventBase {
  session_id: string;
  transcript_path: string;
  cwd: string;
  /** `bypassPermissions`, `default`, ...: the Bash capture rewrites commands only where every Bash command runs unasked. */
  permission_mode?: string;
  tool_name: string;
  tool_input: unknown;
  tool_use_id: string;
}

export interface PostToolUseEvent extends ToolEventBase {
  hook_event_name: 'PostToolUse';
  tool_response: unknown;
}

/** Before the tool runs: the hook may rewrite its input (`updatedInput`). */
export interface PreToolUseEvent extends ToolEventBase {
  hook_event_name: 'PreToolUse';
}

/** The tool failed (a Bash command exiting non-zero too): `error` is Claude Code's own, already cut, text. */
export interface PostToolUseFailureEvent extends ToolEventBase {
  hook_event_name: 'PostToolUseFailure';
  error: string;
  is_interrupt: boolean;
}

export type ToolHookEvent = PostToolUseEvent | PreToolUseEvent | PostToolUseFailureEvent;

/** The main agent finished responding: the transcript now holds the turn's closing answer. */
export interface StopEvent {
  hook_event_name: 'Stop';
  session_id: string;
  transcript_path: string;
  cwd: string;
}

export type ClaudeHookEvent = ToolHookEvent | StopEvent;

export type ParsedHookInput =
  | { ok: true; event: ClaudeHookEvent }
  /** `ignore`: a valid event Spillway does not act on; `invalid`: input it does not understand. */
  | { ok: false; kind: 'ignore' | 'invalid'; reason: string };

/** A session id becomes a folder name: one plain path segment only. */
const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const HANDLED_EVENTS = new Set(['PostToolUse', 'PreToolUse', 'PostToolUseFailure', 'Stop']);

export function parseHookInput(text: string): ParsedHookInput {
  if (text.trim() === '') return { ok: false, kind: 'invalid', reason: 'no input on stdin' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, kind: 'invalid', reason: `stdin is not JSON (${(err as Error).message})` };
  }
  return toHookEvent(value);
}

/** Checks an already-parsed hook input (the Agent SDK hands objects, not text). */
export function toHookEvent(value: unknown): ParsedHookInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, kind: 'invalid', reason: 'hook input is not a JSON object' };
  }
  const v = value as Record<string, unknown>;
  const name = v.hook_event_name;
  if (typeof name !== 'string') return { ok: false, kind: 'invalid', reason: 'hook input has no hook_event_name' };
  if (!HANDLED_EVENTS.has(name)) return { ok: false, kind: 'ignore', reason: `event ${name} is not handled` };
  const required = name === 'Stop' ? ['session_id', 'transcript_path'] : ['session_id', 'transcript_path', 'tool_name', 'tool_use_id'];
  const missing = required.filter((k) => typeof v[k] !== 'string' || v[k] === '');
  if (missing.length > 0) return { ok: false, kind: 'invalid', reason: `${name} input lacks ${missing.join(', ')}` };
  if (name === 'PostToolUse' && !('tool_response' in v)) return { ok: false, kind: 'invalid', reason: 'PostToolUse input lacks tool_response' };
  const sessionId = v.session_id as string;
  if (!SAFE_SEGMENT.test(sessionId)) return { ok: false, kind: 'invalid', reason: `unusable session_id ${JSON.stringify(sessionId)}` };
  const transcriptPath = v.transcript_path as string;
  if (!path.isAbsolute(transcriptPath)) return { ok: false, kind: 'invalid', reason: 'transcript_path is not absolute' };
  const cwd = typeof v.cwd === 'string' ? v.cwd : '';
  if (name === 'Stop') return { ok: true, event: { hook_event_name: 'Stop', session_id: sessionId, transcript_path: transcriptPath, cwd } };
  const base: ToolEventBase = {
    session_id: sessionId,
    transcript_path: transcriptPath,
    cwd,
    ...(typeof v.permission_mode === 'string' ? { permission_mode: v.permission_mode } : {}),
    tool_name: v.tool_name as string,
    tool_input: v.tool_input,
    tool_use_id: v.tool_use_id as string,
  };
  if (name === 'PreToolUse') return { ok: true, event: { ...base, hook_event_name: 'PreToolUse' } };
  if (name === 'PostToolUseFailure') {
    return { ok: true, event: { ...base, hook_event_name: 'PostToolUseFailure', error: typeof v.error === 'string' ? v.error : '', is_interrupt: v.is_interrupt === true } };
  }
  return { ok: true, event: { ...base, hook_event_name: 'PostToolUse', tool_response: v.tool_response } };
}

/**
 * `<projects>/<enc>/<sessionId>/`, the folder that holds Claude Code's own
 * `tool-results/`. A subagent's transcript lives below it
 * (`<sessionId>/subagents/agent-<id>.jsonl`), so walk up to it in that case.
 */
export function claudeSessionDir(event: Pick<PostToolUseEvent, 'session_id' | 'transcript_path'>): string {
  const transcript = path.resolve(event.transcript_path);
  const parts = transcript.split(path.sep);
  const at = parts.lastIndexOf(event.session_id);
  if (at > 0 && parts[at + 1] === 'subagents') return parts.slice(0, at + 1).join(path.sep);
  return path.join(path.dirname(transcript), event.session_id);
}

/** Spillway's blobs and manifest for one Claude Code session, beside `tool-results/`. */
export const CLAUDE_CODE_SPILL_FOLDER = 'spillway';

export function claudeSpillDir(event: Pick<PostToolUseEvent, 'session_id' | 'transcript_path'>): string {
  return path.join(claudeSessionDir(event), CLAUDE_CODE_SPILL_FOLDER);
}
