// Per-turn context series: each call's growth split into what made it, the
// drops named, blobs read back, and the tokens-saved estimate against what the
// agent would have shown without Spillway.
import * as path from 'node:path';
import type { ApiCall } from '../transcripts/calls';
import type { BlobInfo, BlobRead, BlobUse, SourceName, TokensSaved, TurnDrop, TurnPart, TurnPoint, TurnSeries } from '../types';
import { isTurn } from '../../spill/manifest';

/** Assumption for turning chars into tokens (English text and code average ~4). */
export const CHARS_PER_TOKEN = 4;
/** Digest size assumed when the transcript does not say what the model saw (Claude Code's 2 KB preview + notice). */
export const DEFAULT_DIGEST_CHARS = 2_300;
/** Claude Code persists a tool result over this many chars itself and shows its 2 KB preview. */
const CLAUDE_CODE_PERSIST_CHARS = 30_000;
/** Claude Code cuts a failed command's text to this many chars (its head and tail around a notice), persisting nothing. */
const CLAUDE_CODE_FAILURE_CHARS = 10_040;
/** pi's built-in read and bash, and opencode's bash, keep at most 50 KB and 2,000 lines (bash: the tail). */
const PI_OUTPUT_CAP = 50 * 1024;
const PI_OUTPUT_LINES = 2_000;

const tokensOf = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

export function buildTurnSeries(sessionKey: string, calls: readonly ApiCall[], blobs: readonly BlobInfo[], skipped = 0, source?: SourceName): TurnSeries {
  const toolNames = new Map<string, string>();
  const issuedAt = new Map<string, number>();
  for (const [i, call] of calls.entries()) {
    for (const t of call.toolCalls ?? []) {
      toolNames.set(t.id, t.name);
      if (!issuedAt.has(t.id)) issuedAt.set(t.id, i + 1);
    }
  }
  const blobByCall = new Map<string, BlobInfo>();
  for (const b of blobs) if (b.toolCallId) blobByCall.set(b.toolCallId, b);
  const points: TurnPoint[] = calls.map((call, i) => {
    const previous = i > 0 ? calls[i - 1] : undefined;
    const delta = call.promptTokens - (previous?.promptTokens ?? 0);
    return {
      index: i + 1,
      timestamp: call.timestamp,
      promptTokens: call.promptTokens,
      delta,
      parts: partsOf(call, previous, delta, toolNames, blobByCall, issuedAt),
      drop: dropOf(call, delta, previous, i > 1 && previous!.promptTokens < calls[i - 2]!.promptTokens),
      outputTokens: call.outputTokens,
      compaction: call.compactionBefore,
      blobs: [],
      ...(call.messageId !== undefined ? { messageId: call.messageId } : {}),
    };
  });
  const tokensOfResult = resultTokens(calls);
  for (const blob of blobs) {
    const point = blob.turn !== undefined ? points[blob.turn - 1] : undefined;
    point?.blobs.push(blob.key);
  }
  return {
    sessionKey,
    points,
    blobs: blobs.map((b) => blobUse(b, calls, tokensOfResult)),
    compactions: points.filter((p) => p.compaction).length,
    tokensSaved: estimateTokensSaved(points, blobs, source, outputFacts(calls)),
    skipped,
  };
}

/**
 * The growth before `call`: the previous call's output (now part of the
 * prompt), each tool result and prompt since, by their chars; scaled down when
 * the estimate exceeds the growth, "other" for what is left (system prompt,
 * tool definitions, reminders, attachments).
 */
function partsOf(
  call: ApiCall,
  previous: ApiCall | undefined,
  delta: number,
  toolNames: Map<string, string>,
  blobByCall: Map<string, BlobInfo>,
  issuedAt: Map<string, number>,
): TurnPart[] {
  const parts: TurnPart[] = [];
  if (previous && call.dropBefore !== 'compaction') parts.push({ kind: 'assistant', tokens: previous.outputTokens });
  for (const added of call.added ?? []) {
    if (added.kind === 'user') {
      parts.push({ kind: 'user', tokens: tokensOf(added.chars) });
      continue;
    }
    const id = added.toolCallId;
    const blob = id ? blobByCall.get(id) : undefined;
    const tool = (id && toolNames.get(id)) ?? blob?.tool;
    // A spill's own turn, the one every view shows; else the turn of the call that asked for the output.
    const turn = blob?.turn ?? (id ? issuedAt.get(id) : undefined);
    parts.push({
      kind: 'tool-result',
      ...(tool ? { tool } : {}),
      ...(id ? { toolCallId: id } : {}),
      tokens: tokensOf(added.chars),
      spilled: blob !== undefined,
      ...(blob ? { path: blob.path } : {}),
      ...(turn !== undefined ? { turn } : {}),
    });
  }
  if (delta > 0) {
    const estimated = parts.reduce((s, p) => s + p.tokens, 0);
    if (estimated > delta) {
      for (const p of parts) p.tokens = Math.floor((p.tokens * delta) / estimated);
      // Rounding leftovers go to the largest part, so the parts sum to the growth exactly.
      const largest = parts.reduce((a, b) => (b.tokens > a.tokens ? b : a), parts[0]!);
      largest.tokens += delta - parts.reduce((s, p) => s + p.tokens, 0);
    } else if (estimated < delta) parts.push({ kind: 'other', tokens: delta - estimated });
  }
  return parts.filter((p) => p.tokens > 0);
}

/**
 * What shrank the prompt before `call`: what the transcript recorded right before it (in this turn, or in the
 * previous one when that one did not shrink: an extension's record may come a call before the request it
 * prunes); "unexplained" only when nothing did.
 */
function dropOf(call: ApiCall, delta: number, previous: ApiCall | undefined, previousShrank: boolean): TurnDrop | null {
  const recorded = call.dropBefore ?? (call.compactionBefore ? 'compaction' : undefined);
  if (recorded) return { kind: recorded, tokens: Math.max(0, -delta) };
  if (delta >= 0) return null;
  const announced = call.explains ?? (previousShrank ? undefined : (previous?.explains ?? previous?.dropBefore));
  return { kind: announced ?? 'unexplained', tokens: -delta };
}

/** What the transcript says of each tool result beyond its size (failed, its whole output's lines), by tool call id. */
function outputFacts(calls: readonly ApiCall[]): Map<string, OutputFacts> {
  const facts = new Map<string, OutputFacts>();
  for (const call of calls) {
    for (const added of call.added ?? []) {
      if (added.toolCallId && (added.failed || added.lines !== undefined)) {
        facts.set(added.toolCallId, { ...(added.lines !== undefined ? { lines: added.lines } : {}), ...(added.failed ? { failed: true } : {}) });
      }
    }
  }
  return facts;
}

export interface OutputFacts {
  lines?: number;
  failed?: boolean;
}

/** Tokens each tool result added to the prompt that carried it, by tool call id. */
function resultTokens(calls: readonly ApiCall[]): Map<string, number> {
  const tokens = new Map<string, number>();
  for (const call of calls) for (const added of call.added ?? []) if (added.toolCallId) tokens.set(added.toolCallId, tokensOf(added.chars));
  return tokens;
}

/**
 * Tool calls after the one that made the blob that fetched it back: their input names the blob's path (or,
 * relative, its file name), or its tool call's id (a query of the extension that stored it).
 */
function blobUse(blob: BlobInfo, calls: readonly ApiCall[], tokensOfResult: Map<string, number>): BlobUse {
  const reads: BlobRead[] = [];
  const tail = `${path.sep}${blob.name}`;
  for (let i = isTurn(blob.turn) ? blob.turn : calls.length; i < calls.length; i++) {
    for (const t of calls[i]!.toolCalls ?? []) {
      if (t.id === blob.toolCallId) continue;
      const byPath = t.mentions.some((m) => m === blob.path || m.endsWith(tail));
      const byId = blob.toolCallId !== undefined && t.fetches?.includes(blob.toolCallId) === true;
      if (!byPath && !byId) continue;
      const tokens = tokensOfResult.get(t.id);
      reads.push({ turn: i + 1, toolCallId: t.id, ...(tokens !== undefined ? { tokens } : {}) });
    }
  }
  const readBack = reads.length;
  return {
    key: blob.key,
    path: blob.path,
    ...(blob.tool ? { tool: blob.tool } : {}),
    ...(blob.toolCallId ? { toolCallId: blob.toolCallId } : {}),
    ...(blob.turn !== undefined ? { turn: blob.turn } : {}),
    bytes: blob.bytes,
    readBack,
    reads,
    madeBy: madeBySpillway(blob) ? 'spillway' : 'agent',
  };
}

function madeBySpillway(blob: BlobInfo): boolean {
  return blob.madeBy === 'spillway' || blob.attribution === 'manifest';
}

/**
 * What the agent would have put in the context for an output of `chars` (`lines` lines, when known) without
 * Spillway: Claude Code's 2 KB preview of an output it persists, its cut of a failure, else the whole; pi's
 * 2,000 lines / 50 KB (lines of the output's average length; its notice of some 90 chars left out); opencode's
 * bash the same cut (its records hold no line count: by bytes alone); other agents the whole.
 */
export function baselineChars(source: SourceName | undefined, chars: number, facts: OutputFacts = {}): number {
  if (source === 'claude-code') {
    if (facts.failed) return Math.min(chars, CLAUDE_CODE_FAILURE_CHARS);
    return chars > CLAUDE_CODE_PERSIST_CHARS ? DEFAULT_DIGEST_CHARS : chars;
  }
  if (source === 'pi' || source === 'opencode') {
    const lines = facts.lines;
    const kept = lines !== undefined && lines > PI_OUTPUT_LINES ? Math.ceil((chars * PI_OUTPUT_LINES) / lines) : chars;
    return Math.min(kept, PI_OUTPUT_CAP);
  }
  return chars;
}

/**
 * (baseline tokens - digest tokens) x the calls that would have re-sent the
 * baseline: every call after the one that issued the tool call, up to the next
 * compaction (exclusive) or the session's end. Only Spillway's blobs count.
 */
export function estimateTokensSaved(points: readonly TurnPoint[], blobs: readonly BlobInfo[], source?: SourceName, facts: ReadonlyMap<string, OutputFacts> = new Map()): TokensSaved {
  const estimate: TokensSaved = { charsPerToken: CHARS_PER_TOKEN, tokens: 0, contextTokens: 0, calls: 0, agentSpills: 0, blobs: [], blobsWithoutTurn: 0 };
  const carried = new Set<number>();
  for (const blob of blobs) {
    const counted = madeBySpillway(blob);
    if (!counted) estimate.agentSpills++;
    if (!isTurn(blob.turn) || blob.turn > points.length) {
      estimate.blobsWithoutTurn++;
      continue;
    }
    let resentTurns = 0;
    for (let i = blob.turn; i < points.length && !points[i]!.compaction; i++) {
      resentTurns++;
      if (counted) carried.add(i);
    }
    const bodyTokens = tokensOf(blob.bytes);
    const digestKnown = blob.digestChars !== undefined;
    const digestTokens = tokensOf(blob.digestChars ?? DEFAULT_DIGEST_CHARS);
    const known = blob.toolCallId !== undefined ? facts.get(blob.toolCallId) : undefined;
    const baselineTokens = counted ? tokensOf(baselineChars(source, blob.bytes, known)) : digestTokens;
    const perCall = Math.max(0, baselineTokens - digestTokens);
    const saved = perCall * resentTurns;
    estimate.blobs.push({ key: blob.key, bodyTokens, baselineTokens, counted, digestTokens, resentTurns, saved, digestKnown });
    estimate.tokens += saved;
    // Still in the context at the last call: no compaction since it was made.
    if (blob.turn + resentTurns === points.length) estimate.contextTokens += perCall;
  }
  estimate.calls = carried.size;
  return estimate;
}
