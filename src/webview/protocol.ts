// The typed messages between the extension host and the chart page. Shared by
// both sides (bundled into each); every message received is checked by a guard
// before use, since a webview message is just `unknown` JSON.

/** One spill made during a turn, as the chart shows it. */
export interface ChartSpill {
  /** The blob's stable id in the tree (used to reveal it). */
  blobId: string;
  label: string;
  bytes: number;
}

/** One API call of a session. */
export interface ChartTurn {
  /** 1-based turn number. */
  turn: number;
  /** Epoch ms, when known. */
  time?: number;
  promptTokens: number;
  /** promptTokens minus the previous turn's (the first turn's own size). */
  delta: number;
  compaction: boolean;
  spills: ChartSpill[];
}

export interface ChartData {
  sessionId: string;
  title: string;
  source: string;
  contextWindow: number;
  /** Budget-delta threshold as a fraction of the window (e.g. 0.1). */
  budgetDelta: number;
  /** Estimated prompt tokens the spills kept out of context. */
  tokensSaved: number;
  spilledBytes: number;
  /** Blobs of the session (some may not be tied to a turn). */
  blobCount: number;
  turns: ChartTurn[];
}

export type HostToPage = { type: 'chartData'; data: ChartData } | { type: 'error'; message: string };

export type PageToHost = { type: 'ready' } | { type: 'revealBlob'; blobId: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function isChartSpill(v: unknown): v is ChartSpill {
  return isRecord(v) && typeof v.blobId === 'string' && typeof v.label === 'string' && isFiniteNumber(v.bytes);
}

export function isChartTurn(v: unknown): v is ChartTurn {
  return (
    isRecord(v) &&
    isFiniteNumber(v.turn) &&
    (v.time === undefined || isFiniteNumber(v.time)) &&
    isFiniteNumber(v.promptTokens) &&
    isFiniteNumber(v.delta) &&
    typeof v.compaction === 'boolean' &&
    Array.isArray(v.spills) &&
    v.spills.every(isChartSpill)
  );
}

export function isChartData(v: unknown): v is ChartData {
  return (
    isRecord(v) &&
    typeof v.sessionId === 'string' &&
    typeof v.title === 'string' &&
    typeof v.source === 'string' &&
    isFiniteNumber(v.contextWindow) &&
    isFiniteNumber(v.budgetDelta) &&
    isFiniteNumber(v.tokensSaved) &&
    isFiniteNumber(v.spilledBytes) &&
    isFiniteNumber(v.blobCount) &&
    Array.isArray(v.turns) &&
    v.turns.every(isChartTurn)
  );
}

export function isHostToPage(v: unknown): v is HostToPage {
  if (!isRecord(v)) return false;
  if (v.type === 'chartData') return isChartData(v.data);
  if (v.type === 'error') return typeof v.message === 'string';
  return false;
}

export function isPageToHost(v: unknown): v is PageToHost {
  if (!isRecord(v)) return false;
  if (v.type === 'ready') return true;
  if (v.type === 'revealBlob') return typeof v.blobId === 'string' && v.blobId.length > 0;
  return false;
}
