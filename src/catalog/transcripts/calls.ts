// One API call as a source reads it from a transcript; turns.ts turns a list
// of them into the public TurnPoint series.
import type { LineReducer } from './transcripts';

export interface ApiCall {
  messageId?: string;
  timestamp: string;
  promptTokens: number;
  outputTokens: number;
  /** A compaction happened before this call. */
  compactionBefore: boolean;
  /** What entered the transcript since the previous call (tool results, the user's prompt). */
  added?: AddedContent[];
  /** What shrank the context before this call, when the transcript says (a compaction, a prune, a flush). */
  dropBefore?: DropKind;
  /**
   * A record since the previous call that says the context is about to shrink (a pi-condense summary or flush,
   * Spillway's spill entry, a compaction boundary): it names a drop of this call or of the next one.
   */
  explains?: DropKind;
  /** Tool calls this call issued, with the absolute paths their input names (to tell when a blob is read back). */
  toolCalls?: IssuedToolCall[];
}

export type DropKind = 'compaction' | 'pi-condense-prune' | 'spillway-flush';

export interface AddedContent {
  kind: 'tool-result' | 'user';
  toolCallId?: string;
  /** Characters the model was sent. */
  chars: number;
  /** A tool result that is an error (agents cut a failure's text their own way). */
  failed?: boolean;
  /** Lines of the whole output, when a record says (Spillway's pi entry): what the agent alone would have cut by. */
  lines?: number;
}

export interface IssuedToolCall {
  id: string;
  name: string;
  mentions: string[];
  /** Tool call ids whose stored output this call fetched back by id (pi-condense's context_tree_query). */
  fetches?: string[];
}

/** A transcript's state that gathers, or not, the paths each tool call names (IssuedToolCall.mentions). */
export interface MentionsState {
  /** Whether they are looked for: not for a listing (forListing). */
  mentions: boolean;
}

/**
 * `reducer` for a listing (list, grep, clean): the same sessions and blobs, its calls without the paths each tool call
 * names, which only `turns` shows (a blob read back): finding them means visiting every tool input.
 */
export function forListing<S extends MentionsState>(reducer: LineReducer<S>): LineReducer<S> {
  return { ...reducer, kind: `${reducer.kind} listing`, init: () => ({ ...reducer.init(), mentions: false }) };
}

const PATH_IN_INPUT = /(?:~|\/)[^\s'"`;|&<>()]*\/[^\s'"`;|&<>()]+/g;

/** IssuedToolCall.mentions of a call with this input, as `state` gathers them (none for a listing: forListing). */
export function mentionsIn(state: MentionsState, input: unknown): string[] {
  return state.mentions ? pathsIn(input) : [];
}

/** Absolute paths named anywhere in a tool call's input (a Read's file_path, a `cat` in a command). */
function pathsIn(input: unknown, max = 16): string[] {
  const found = new Set<string>();
  const visit = (v: unknown, depth: number): void => {
    if (found.size >= max || depth > 4) return;
    if (typeof v === 'string') {
      for (const m of v.matchAll(PATH_IN_INPUT)) if (found.size < max && m[0].length <= 1024) found.add(own(m[0]));
    } else if (Array.isArray(v)) v.forEach((x) => visit(x, depth + 1));
    else if (v && typeof v === 'object') Object.values(v).forEach((x) => visit(x, depth + 1));
  };
  visit(input, 0);
  return [...found];
}

/** Append or update (same message id = same call, keep the max output) a call in `calls`. */
export function recordCall(calls: ApiCall[], byId: Map<string, number>, call: ApiCall): number {
  if (call.messageId !== undefined) {
    const existing = byId.get(call.messageId);
    if (existing !== undefined) {
      const known = calls[existing]!;
      known.outputTokens = Math.max(known.outputTokens, call.outputTokens);
      known.promptTokens = Math.max(known.promptTokens, call.promptTokens);
      return existing;
    }
    byId.set(call.messageId, calls.length);
  }
  calls.push(call);
  return calls.length - 1;
}

export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Total chars of a tool result's content (a string or an array of text blocks). */
export function contentChars(content: unknown): number {
  if (typeof content === 'string') return content.length;
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const block of content) {
    const b = obj(block);
    if (b && typeof b.text === 'string') total += b.text.length;
  }
  return total;
}

/** Text of a tool result's content, for finding the paths it names. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block) => (obj(block) && typeof obj(block)!.text === 'string' ? (obj(block)!.text as string) : '')).join('\n');
}

/**
 * A copy of `text` that does not keep its parent alive: V8 slices and regexp
 * captures point into the whole source string (a transcript line's content),
 * which a long-lived cache must not retain.
 */
export function own(text: string): string {
  return (' ' + text).slice(1);
}
