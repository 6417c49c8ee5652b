/** Code-unit order (ISO timestamps and keys need no locale rules). */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
