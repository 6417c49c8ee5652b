// JSON text of any value without throwing: for lengths and one-line renderings, never for storage.

/** JSON text of `value`; '' when it has none (undefined, a function) or cannot have one (a cycle, nesting deeper than the stack). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
