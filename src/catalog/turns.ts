// Per-turn context series and the tokens-saved estimate.
import type { ApiCall } from './calls';
import type { BlobInfo, TokensSaved, TurnPoint, TurnSeries } from './types';

/** Assumption for turning chars into tokens (English text and code average ~4). */
export const CHARS_PER_TOKEN = 4;
/** Digest size assumed when the transcript does not say what the model saw (Claude Code's 2 KB preview + notice). */
export const DEFAULT_DIGEST_CHARS = 2_300;

export function buildTurnSeries(sessionKey: string, calls: readonly ApiCall[], blobs: readonly BlobInfo[], skipped = 0): TurnSeries {
  const points: TurnPoint[] = [];
  let previous = 0;
  calls.forEach((call, i) => {
    const base = call.compactionBefore ? 0 : previous;
    points.push({
      index: i + 1,
      timestamp: call.timestamp,
      promptTokens: call.promptTokens,
      delta: call.promptTokens - base,
      outputTokens: call.outputTokens,
      compaction: call.compactionBefore,
      blobs: [],
      ...(call.messageId !== undefined ? { messageId: call.messageId } : {}),
    });
    previous = call.promptTokens;
  });
  for (const blob of blobs) {
    const point = blob.turn !== undefined ? points[blob.turn - 1] : undefined;
    point?.blobs.push(blob.key);
  }
  return {
    sessionKey,
    points,
    compactions: points.filter((p) => p.compaction).length,
    tokensSaved: estimateTokensSaved(points, blobs),
    skipped,
  };
}

/**
 * (body tokens - digest tokens) x the calls that would have re-sent the body:
 * every call after the one that issued the tool call, up to the next
 * compaction (exclusive) or the session's end.
 */
export function estimateTokensSaved(points: readonly TurnPoint[], blobs: readonly BlobInfo[]): TokensSaved {
  const estimate: TokensSaved = { charsPerToken: CHARS_PER_TOKEN, tokens: 0, blobs: [], blobsWithoutTurn: 0 };
  for (const blob of blobs) {
    if (blob.turn === undefined || blob.turn > points.length) {
      estimate.blobsWithoutTurn++;
      continue;
    }
    let resentTurns = 0;
    for (let i = blob.turn; i < points.length && !points[i]!.compaction; i++) resentTurns++;
    const bodyTokens = Math.ceil(blob.bytes / CHARS_PER_TOKEN);
    const digestKnown = blob.digestChars !== undefined;
    const digestTokens = Math.ceil((blob.digestChars ?? DEFAULT_DIGEST_CHARS) / CHARS_PER_TOKEN);
    const saved = Math.max(0, bodyTokens - digestTokens) * resentTurns;
    estimate.blobs.push({ key: blob.key, bodyTokens, digestTokens, resentTurns, saved, digestKnown });
    estimate.tokens += saved;
  }
  return estimate;
}
