// Turns a catalog TurnSeries into the chart page's ChartData. Pure.

import type { SessionInfo, TurnSeries } from '../catalog/types';
import type { ChartData, ChartTurn } from '../webview/protocol';
import { blobLabel, sessionLabel, sourceLabel } from './treeModel';

export function toChartData(
  session: SessionInfo,
  series: TurnSeries,
  options: { contextWindow: number; budgetDelta: number },
): ChartData {
  const blobs = new Map(session.blobs.map((b) => [b.key, b]));
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
    };
  });
  return {
    sessionId: session.key,
    title: `${sessionLabel(session)} — ${sourceLabel(session.source)}`,
    source: session.source,
    contextWindow: options.contextWindow,
    budgetDelta: options.budgetDelta,
    tokensSaved: series.tokensSaved.tokens,
    spilledBytes: session.bytes,
    blobCount: session.blobs.length,
    turns,
  };
}
