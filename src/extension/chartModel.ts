// Turns a catalog TurnSeries into the chart page's ChartData: the parts of
// each turn's growth, the drops named, the largest contributors and the
// tokens-saved sentence. Pure.

import type { SessionInfo, TokensSaved, TurnDrop, TurnPart, TurnSeries } from '../catalog/types';
import type { ChartContributor, ChartData, ChartPart, ChartTurn } from '../webview/protocol';
import { formatCompact } from './format';
import { blobLabel, sessionLabel, sourceLabel } from './treeModel';

const DROP_LABELS: Record<TurnDrop['kind'], string> = {
  compaction: 'compaction',
  'pi-condense-prune': 'pi-condense prune',
  'spillway-flush': 'Spillway flush',
  unexplained: 'unexplained drop',
};

/** Rows of the "what ate the context" table. */
const CONTRIBUTORS = 10;

/** A tool result's label says which turn's call asked for it when that is not the turn it grew (the spill's turn). */
function partLabel(p: TurnPart, turn: number): string {
  if (p.kind === 'assistant') return 'assistant output';
  if (p.kind === 'user') return 'user prompt';
  if (p.kind === 'other') return 'other (system prompt, tools, reminders)';
  const tool = p.tool ?? 'tool result';
  return p.turn !== undefined && p.turn !== turn ? `${tool} (turn ${p.turn})` : tool;
}

export function toChartData(
  session: SessionInfo,
  series: TurnSeries,
  options: { contextWindow: number; budgetDelta: number },
): ChartData {
  const blobs = new Map(session.blobs.map((b) => [b.key, b]));
  const uses = new Map(series.blobs.map((b) => [b.path, b]));
  const turns: ChartTurn[] = series.points.map((p) => {
    const time = Date.parse(p.timestamp);
    return {
      turn: p.index,
      ...(Number.isFinite(time) ? { time } : {}),
      promptTokens: p.promptTokens,
      delta: p.delta,
      compaction: p.compaction,
      spills: p.blobs.flatMap((key) => {
        const b = blobs.get(key);
        return b ? [{ blobId: key, label: blobLabel(b), bytes: b.bytes }] : [];
      }),
      parts: p.parts.map(
        (part): ChartPart => ({
          kind: part.kind,
          label: partLabel(part, p.index),
          tokens: part.tokens,
          spilled: part.spilled === true,
          ...(part.path && blobs.has(part.path) ? { blobId: part.path } : {}),
        }),
      ),
      drop: p.drop ? { label: DROP_LABELS[p.drop.kind], tokens: p.drop.tokens } : null,
    };
  });
  const contributors: ChartContributor[] = series.points
    .flatMap((p) => p.parts.filter((part) => part.kind === 'tool-result').map((part) => ({ turn: p.index, part })))
    .sort((a, b) => b.part.tokens - a.part.tokens)
    .slice(0, CONTRIBUTORS)
    .map(({ turn, part }) => {
      const blob = part.path ? blobs.get(part.path) : undefined;
      const use = part.path ? uses.get(part.path) : undefined;
      return {
        // The turn of the call that produced it (a spill's turn, as the tree and the CLI show it).
        turn: part.turn ?? turn,
        tool: part.tool ?? 'tool result',
        tokens: part.tokens,
        spilled: part.spilled === true,
        ...(blob ? { blobId: blob.key, label: blobLabel(blob), bytes: blob.bytes } : {}),
        ...(use ? { readBack: use.readBack } : {}),
      };
    });
  return {
    sessionId: session.key,
    title: `${sessionLabel(session)} — ${sourceLabel(session.source)}`,
    source: session.source,
    contextWindow: options.contextWindow,
    budgetDelta: options.budgetDelta,
    tokensSaved: series.tokensSaved.tokens,
    savedText: savedSentence(series.tokensSaved, sourceLabel(session.source)),
    contributors,
    spilledBytes: session.bytes,
    blobCount: session.blobs.length,
    turns,
  };
}

/**
 * What the tokens-saved estimate counts, in words: the context's size now and
 * the input not re-sent, both against what the agent would have shown without
 * Spillway; the agent's own spills are said to count for nothing.
 */
export function savedSentence(saved: TokensSaved, agent: string): string {
  const own = saved.agentSpills;
  const ownText = own ? ` ${own} blob${own === 1 ? ' is' : 's are'} ${agent}'s own spill${own === 1 ? '' : 's'} (${agent} already showed only a preview): not counted.` : '';
  const counted = saved.blobs.filter((b) => b.counted).length;
  if (counted === 0) return `Spillway saved ≈0 tokens here: it spilled nothing in this session.${ownText}`;
  return (
    `Spillway (est., ${saved.charsPerToken} chars/token, against what ${agent} would have shown without it): ` +
    `context now ≈${formatCompact(saved.contextTokens)} tokens smaller; ` +
    `≈${formatCompact(saved.tokens)} input tokens not re-sent over ${saved.calls} call${saved.calls === 1 ? '' : 's'}.${ownText}`
  );
}
