/** 1234567 -> "1,234,567": locale-independent, so the model, tests and screenshots read the same digits. */
export function formatCount(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
