// One API call as a source reads it from a transcript; turns.ts turns a list
// of them into the public TurnPoint series.

export interface ApiCall {
  messageId?: string;
  timestamp: string;
  promptTokens: number;
  outputTokens: number;
  /** A compaction happened before this call. */
  compactionBefore: boolean;
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
