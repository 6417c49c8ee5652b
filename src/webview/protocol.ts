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

/** One part of a turn's growth (a tool result, the assistant's output, the prompt, the rest). */
export interface ChartPart {
  kind: 'tool-result' | 'assistant' | 'user' | 'other';
  /** "Bash", "assistant output", "user prompt", "other (system prompt, tools, reminders)". */
  label: string;
  tokens: number;
  spilled: boolean;
  /** The blob holding a spilled result (one click reveals it). */
  blobId?: string;
}

/** A drop of the prompt before a turn, named. */
export interface ChartDrop {
  /** "compaction", "pi-condense prune", "Spillway flush", "unexplained drop". */
  label: string;
  tokens: number;
}

/** A row of "what ate the context": one of the largest tool results. */
export interface ChartContributor {
  turn: number;
  tool: string;
  /** Tokens it added to the prompt (the digest's, when spilled). */
  tokens: number;
  spilled: boolean;
  blobId?: string;
  label?: string;
  bytes?: number;
  /** Later tool calls that read the blob back. */
  readBack?: number;
}

/** One API call of a session. */
export interface ChartTurn {
  /** 1-based turn number. */
  turn: number;
  /** Epoch ms, when known. */
  time?: number;
  promptTokens: number;
  /** promptTokens minus the previous turn's (the first turn's own size); negative after a drop. */
  delta: number;
  compaction: boolean;
  spills: ChartSpill[];
  parts: ChartPart[];
  drop: ChartDrop | null;
}

export interface ChartData {
  sessionId: string;
  title: string;
  source: string;
  contextWindow: number;
  /** Budget-delta threshold as a fraction of the window (e.g. 0.1). */
  budgetDelta: number;
  /** Estimated input tokens Spillway's digests kept from being re-sent. */
  tokensSaved: number;
  /** What the estimate counts, against which baseline, in one sentence. */
  savedText: string;
  contributors: ChartContributor[];
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

function isChartPart(v: unknown): v is ChartPart {
  return (
    isRecord(v) &&
    ['tool-result', 'assistant', 'user', 'other'].includes(v.kind as string) &&
    typeof v.label === 'string' &&
    isFiniteNumber(v.tokens) &&
    typeof v.spilled === 'boolean' &&
    (v.blobId === undefined || typeof v.blobId === 'string')
  );
}

function isChartDrop(v: unknown): v is ChartDrop | null {
  return v === null || (isRecord(v) && typeof v.label === 'string' && isFiniteNumber(v.tokens));
}

function isChartContributor(v: unknown): v is ChartContributor {
  return (
    isRecord(v) &&
    isFiniteNumber(v.turn) &&
    typeof v.tool === 'string' &&
    isFiniteNumber(v.tokens) &&
    typeof v.spilled === 'boolean' &&
    (v.blobId === undefined || typeof v.blobId === 'string') &&
    (v.label === undefined || typeof v.label === 'string') &&
    (v.bytes === undefined || isFiniteNumber(v.bytes)) &&
    (v.readBack === undefined || isFiniteNumber(v.readBack))
  );
}

export function isChartTurn(v: unknown): v is ChartTurn {
  return (
    isRecord(v) &&
    Array.isArray(v.parts) &&
    v.parts.every(isChartPart) &&
    isChartDrop(v.drop) &&
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
    typeof v.savedText === 'string' &&
    Array.isArray(v.contributors) &&
    v.contributors.every(isChartContributor) &&
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
