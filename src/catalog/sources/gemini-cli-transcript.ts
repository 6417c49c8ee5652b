// Gemini CLI's session file, `<project temp>/chats/session-<time>-<id8>.jsonl`:
// a metadata line (`sessionId`), `$set` updates, and message records
// (`type` user | gemini | info | ...). A `gemini` record carries the call's
// `tokens {input, output, ...}` and, once its tools ran, `toolCalls [{id, name,
// args, result}]` (the record is written again under the same id); a `user`
// record carries the prompt or the `functionResponse` parts sent back.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { forListing, mentionsIn, num, obj, own, recordCall, str, type AddedContent, type ApiCall, type MentionsState } from '../transcripts/calls';
import type { LineReducer } from '../transcripts/transcripts';

export interface GeminiState extends MentionsState {
  sessionId?: string;
  firstPrompt?: string;
  calls: ApiCall[];
  callById: Map<string, number>;
  /** Tool call id -> the call (index into `calls`) that issued it. */
  issuedBy: Map<string, number>;
  /** A blob path a tool result names as holding the complete output (Spillway's digest) -> the tool call id. */
  blobCalls: Map<string, string>;
  /** Chars of each tool result the model was sent. */
  resultChars: Map<string, number>;
  pendingAdded: AddedContent[];
}

/** The sentence Spillway's Gemini digest ends with (src/adapters/gemini-cli-shell-output.ts). */
const BLOB_NAMED = /its complete output \(stdout and stderr\) is in (\/[^\n\]]+)\]/;

export const geminiReducer: LineReducer<GeminiState> = {
  kind: 'gemini-cli',
  init: () => ({ calls: [], callById: new Map(), issuedBy: new Map(), blobCalls: new Map(), resultChars: new Map(), pendingAdded: [], mentions: true }),
  line(state, value) {
    const record = obj(value);
    if (!record) return false;
    if (record.$set !== undefined || record.$rewindTo !== undefined) return true;
    const type = str(record.type);
    if (type === undefined) {
      state.sessionId ??= str(record.sessionId);
      return state.sessionId !== undefined;
    }
    if (type === 'user') readUser(state, record.content);
    else if (type === 'gemini') readGemini(state, record);
    return true;
  },
};

export const geminiListingReducer = forListing(geminiReducer);

function readUser(state: GeminiState, content: unknown): void {
  if (!Array.isArray(content)) return;
  for (const part of content) {
    const p = obj(part);
    const response = obj(p?.functionResponse);
    if (response) {
      const id = str(response.id) ?? '';
      const text = JSON.stringify(response.response ?? '');
      state.pendingAdded.push({ kind: 'tool-result', toolCallId: own(id), chars: text.length });
      state.resultChars.set(own(id), text.length);
      const output = obj(response.response)?.output;
      const blob = typeof output === 'string' ? BLOB_NAMED.exec(output)?.[1] : undefined;
      if (blob) state.blobCalls.set(own(blob), own(id));
    } else if (typeof p?.text === 'string') {
      state.pendingAdded.push({ kind: 'user', chars: p.text.length });
      state.firstPrompt ??= own(p.text.slice(0, 120));
    }
  }
}

function readGemini(state: GeminiState, record: Record<string, unknown>): void {
  const tokens = obj(record.tokens);
  const id = str(record.id);
  const known = id !== undefined ? state.callById.get(id) : undefined;
  const index =
    known ??
    recordCall(state.calls, state.callById, {
      ...(id !== undefined && { messageId: own(id) }),
      timestamp: own(str(record.timestamp) ?? ''),
      promptTokens: num(tokens?.input),
      outputTokens: num(tokens?.output),
      compactionBefore: false,
      added: state.pendingAdded,
    });
  if (known === undefined) state.pendingAdded = [];
  const call = state.calls[index]!;
  call.promptTokens = Math.max(call.promptTokens, num(tokens?.input));
  call.outputTokens = Math.max(call.outputTokens, num(tokens?.output));
  if (!Array.isArray(record.toolCalls)) return;
  call.toolCalls = [];
  for (const t of record.toolCalls) {
    const tc = obj(t);
    const callId = str(tc?.id);
    if (!tc || !callId) continue;
    call.toolCalls.push({ id: own(callId), name: own(str(tc.name) ?? '?'), mentions: mentionsIn(state, tc.args) });
    state.issuedBy.set(own(callId), index);
  }
}

const byName = new WeakMap<GeminiState, { size: number; calls: Map<string, string> }>();

/** The tool call whose digest named a blob of this file name (a blob in a bucket knows its local name, not its path). */
export function blobCallNamed(state: GeminiState, name: string): string | undefined {
  let index = byName.get(state);
  // Made once per parsed state (remade only if it grew): a lookup per blob over every named path grew with the square.
  if (index?.size !== state.blobCalls.size) {
    index = { size: state.blobCalls.size, calls: new Map() };
    for (const [file, callId] of state.blobCalls) if (!index.calls.has(path.basename(file))) index.calls.set(path.basename(file), callId);
    byName.set(state, index);
  }
  return index.calls.get(name);
}

/**
 * The session file of `sessionId` in `<project temp>/chats/`: named
 * `session-<time>-<first 8 of the id>.jsonl`; the newest such name wins.
 */
export async function findGeminiTranscript(projectTemp: string, sessionId: string): Promise<string | undefined> {
  const chats = path.join(projectTemp, 'chats');
  const suffix = `-${sessionId.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 8)}.jsonl`;
  const names = await fsp.readdir(chats).catch(() => [] as string[]);
  const matching = names.filter((n) => n.startsWith('session-') && n.endsWith(suffix)).sort();
  return matching.length > 0 ? path.join(chats, matching[matching.length - 1]!) : undefined;
}
