// Parses what a person types into "Open at line range...". Pure.

export interface LineRange {
  /** 1-based, inclusive. */
  start: number;
  /** 1-based, inclusive. */
  end: number;
}

export type LineRangeResult = { ok: true; range: LineRange } | { ok: false; message: string };

/**
 * Accepts `120-180`, `120:180`, `120..180`, `120,+60` (start plus count) and a
 * lone `120`. `totalLines`, when known, bounds the range: a range reaching
 * past it is an error that says how far the blob goes (never cut short silently).
 */
export function parseLineRange(input: string, totalLines?: number): LineRangeResult {
  const text = input.trim();
  if (!text) return { ok: false, message: 'Type a line or a range, e.g. 120-180.' };
  const m = /^(\d+)\s*(?:(?:-|:|\.\.|–)\s*(\d+)|,\s*\+(\d+))?$/.exec(text);
  if (!m) return { ok: false, message: `"${text}" is not a line range: use START-END, e.g. 120-180.` };
  const start = Number(m[1]);
  const end = m[2] !== undefined ? Number(m[2]) : m[3] !== undefined ? start + Number(m[3]) - 1 : start;
  if (start < 1) return { ok: false, message: 'Lines start at 1.' };
  if (end < start) return { ok: false, message: `The range ends (${end}) before it starts (${start}).` };
  if (totalLines !== undefined) {
    if (start > totalLines) return { ok: false, message: `The blob has ${totalLines} lines; line ${start} is past its end.` };
    if (end > totalLines) return { ok: false, message: `The blob has ${totalLines} lines; the range ends past them (${end}). Try ${start}-${totalLines}.` };
  }
  return { ok: true, range: { start, end } };
}

/** `undefined` when valid, else the message: the shape `InputBox.validateInput` wants. */
export function validateLineRange(input: string, totalLines?: number): string | undefined {
  const r = parseLineRange(input, totalLines);
  return r.ok ? undefined : r.message;
}
