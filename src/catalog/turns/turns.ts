// Per-turn context series: each call's growth split into what made it, the
// drops named, blobs read back, and the tokens-saved estimate against what the
// agent would have shown without Spillway.
import * as path from 'node:path';
import type { ApiCall } from '../transcripts/calls';
import type { BlobInfo, BlobUse, SourceName, TokensSaved, TurnDrop, TurnPart, TurnPoint, TurnSeries } from '../types';
import { isTurn } from '../../spill/manifest';

/** Assumption for turning chars into tokens (English text and code average ~4). */
export const CHARS_PER_TOKEN = 4;
/** Digest size assumed when the transcript does not say what the model saw (Claude Code's 2 KB preview + notice). */
export const DEFAULT_DIGEST_CHARS = 2_300;
/** Claude Code persists a tool result over this many chars itself and shows its 2 KB preview. */
const CLAUDE_CODE_PERSIST_CHARS = 30_000;
/** pi's built-in read and bash keep at most 50 KB. */
const PI_OUTPUT_CAP = 50 * 1024;

const tokensOf = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

export function buildTurnSeries(sessionKey: string, calls: readonly ApiCall[], blobs: readonly BlobInfo[], skipped = 0, source?: SourceName): TurnSeries {
  const toolNames = new Map<string, string>();
  for (const call of calls) for (const t of call.toolCalls ?? []) toolNames.set(t.id, t.name);
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
      parts: partsOf(call, previous, delta, toolNames, blobByCall),
      drop: dropOf(call, delta),
      outputTokens: call.outputTokens,
      compaction: call.compactionBefore,
      blobs: [],
      ...(call.messageId !== undefined ? { messageId: call.messageId } : {}),
    };
  });
  for (const blob of blobs) {
    const point = blob.turn !== undefined ? points[blob.turn - 1] : undefined;
    point?.blobs.push(blob.key);
  }
  return {
    sessionKey,
    points,
    blobs: blobs.map((b) => blobUse(b, calls)),
    compactions: points.filter((p) => p.compaction).length,
    tokensSaved: estimateTokensSaved(points, blobs, source),
    skipped,
  };
}

/**
 * The growth before `call`: the previous call's output (now part of the
 * prompt), each tool result and prompt since, by their chars; scaled down when
 * the estimate exceeds the growth, "other" for what is left (system prompt,
 * tool definitions, reminders, attachments).
 */
function partsOf(call: ApiCall, previous: ApiCall | undefined, delta: number, toolNames: Map<string, string>, blobByCall: Map<string, BlobInfo>): TurnPart[] {
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
    parts.push({
      kind: 'tool-result',
      ...(tool ? { tool } : {}),
      ...(id ? { toolCallId: id } : {}),
      tokens: tokensOf(added.chars),
      spilled: blob !== undefined,
      ...(blob ? { path: blob.path } : {}),
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

function dropOf(call: ApiCall, delta: number): TurnDrop | null {
  const kind = call.dropBefore ?? (call.compactionBefore ? 'compaction' : delta < 0 ? 'unexplained' : undefined);
  return kind ? { kind, tokens: Math.max(0, -delta) } : null;
}

/** Tool calls after the one that made the blob whose input names the blob's path (or, relative, its file name). */
function blobUse(blob: BlobInfo, calls: readonly ApiCall[]): BlobUse {
  let readBack = 0;
  const tail = `${path.sep}${blob.name}`;
  for (let i = isTurn(blob.turn) ? blob.turn : calls.length; i < calls.length; i++) {
    for (const t of calls[i]!.toolCalls ?? []) {
      if (t.id !== blob.toolCallId && t.mentions.some((m) => m === blob.path || m.endsWith(tail))) readBack++;
    }
  }
  return {
    key: blob.key,
    path: blob.path,
    ...(blob.tool ? { tool: blob.tool } : {}),
    ...(blob.toolCallId ? { toolCallId: blob.toolCallId } : {}),
    ...(blob.turn !== undefined ? { turn: blob.turn } : {}),
    bytes: blob.bytes,
    readBack,
    madeBy: madeBySpillway(blob) ? 'spillway' : 'agent',
  };
}

function madeBySpillway(blob: BlobInfo): boolean {
  return blob.madeBy === 'spillway' || blob.attribution === 'manifest';
}

/** What the agent would have put in the context for an output of `chars` without Spillway. */
export function baselineChars(source: SourceName | undefined, chars: number): number {
  if (source === 'claude-code') return chars > CLAUDE_CODE_PERSIST_CHARS ? DEFAULT_DIGEST_CHARS : chars;
  if (source === 'pi') return Math.min(chars, PI_OUTPUT_CAP);
  return chars;
}

/**
 * (baseline tokens - digest tokens) x the calls that would have re-sent the
 * baseline: every call after the one that issued the tool call, up to the next
 * compaction (exclusive) or the session's end. Only Spillway's blobs count.
 */
export function estimateTokensSaved(points: readonly TurnPoint[], blobs: readonly BlobInfo[], source?: SourceName): TokensSaved {
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
    const baselineTokens = counted ? tokensOf(baselineChars(source, blob.bytes)) : digestTokens;
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
