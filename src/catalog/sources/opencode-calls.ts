// The API calls of an opencode session as Spillway's plugin recorded them
// (src/adapters/opencode-calls.ts writes them; opencode's own SQLite store is
// never read): `<session folder>/.spillway-calls.jsonl`, one line per model API
// call, read into the ApiCall series the per-turn chart is made of.
import { forListing, mentionsIn, num, obj, str, type AddedContent, type ApiCall, type MentionsState } from '../transcripts/calls';
import type { LineReducer } from '../transcripts/transcripts';

/** The record's name in a session folder (a `.spillway*` name: never listed as a blob). */
export const CALLS_FILE = '.spillway-calls.jsonl';
export const CALLS_VERSION = 1;

export interface CallTokens {
  input: number;
  output: number;
  reasoning: number;
  cache: { read: number; write: number };
}

/** One tool call an API call issued: its id, tool, input (long strings cut) and result size when known. */
export interface RecordedToolCall {
  id: string;
  tool: string;
  input?: unknown;
  /** Characters of the result the model was sent (opencode's text, or Spillway's digest in its place). */
  resultChars?: number;
  failed?: boolean;
}

/** One line of the record: one model API call. */
export interface CallLine {
  v: typeof CALLS_VERSION;
  sessionId: string;
  messageId: string;
  /** When the call finished (ISO). */
  time: string;
  tokens: CallTokens;
  /** opencode's summary message of a compaction: the calls after it start from the summary. */
  compaction?: true;
  toolCalls: RecordedToolCall[];
}

export interface OpencodeCallsState extends MentionsState {
  sessionId?: string;
  calls: ApiCall[];
  /** The API call (0-based) that issued each tool call. */
  issuedBy: Map<string, number>;
  /** The previous call's tool results: they enter the next call's prompt. */
  pending: AddedContent[];
  compactionNext: boolean;
}

const reducer: LineReducer<OpencodeCallsState> = {
  kind: 'opencode-calls',
  init: () => ({ calls: [], issuedBy: new Map(), pending: [], compactionNext: false, mentions: true }),
  line(state, value) {
    const line = obj(value);
    const tokens = obj(line?.tokens);
    if (!line || line.v !== CALLS_VERSION || !tokens) return false;
    state.sessionId ??= str(line.sessionId);
    const cache = obj(tokens.cache);
    const index = state.calls.length;
    const toolCalls = Array.isArray(line.toolCalls) ? line.toolCalls.map(obj).filter((t) => t && str(t.id)) : [];
    // opencode's `input` leaves out what the cache read or wrote: the prompt is all three.
    state.calls.push({
      ...(str(line.messageId) ? { messageId: str(line.messageId) } : {}),
      timestamp: str(line.time) ?? '',
      promptTokens: num(tokens.input) + num(cache?.read) + num(cache?.write),
      outputTokens: num(tokens.output),
      compactionBefore: state.compactionNext,
      ...(state.compactionNext ? { dropBefore: 'compaction' as const } : {}),
      added: state.pending,
      toolCalls: toolCalls.map((t) => ({ id: str(t!.id)!, name: str(t!.tool) ?? 'tool', mentions: mentionsIn(state, t!.input) })),
    });
    state.pending = [];
    for (const t of toolCalls) {
      const id = str(t!.id)!;
      state.issuedBy.set(id, index);
      if (typeof t!.resultChars === 'number') state.pending.push({ kind: 'tool-result', toolCallId: id, chars: t!.resultChars, ...(t!.failed === true ? { failed: true } : {}) });
    }
    state.compactionNext = line.compaction === true;
    return true;
  },
};

export const opencodeCallsReducer = reducer;
export const opencodeCallsListingReducer = forListing(reducer);
