// Colours the chart draws with, kept readable in any theme. VS Code's theme
// colours may carry an alpha (charts.orange is minimap.findMatchHighlight,
// #EA5C0055, a third opaque, for overlays on the minimap: drawn as it is over
// a dark page it turned dark brown, and composited then lightened it was a
// greyish brown still); here each is taken at full strength (its alpha
// dropped), then moved toward the page's opposite until it reaches a contrast
// ratio (WCAG 2: 4.5 for text, 3 for marks and bars). Pure: strings in, strings out.

export type Rgb = [number, number, number];

/** `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb(...)`, `rgba(...)` -> [r, g, b, a]; undefined otherwise. */
export function parseColour(text: string): [number, number, number, number] | undefined {
  const s = text.trim().toLowerCase();
  let m = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(s);
  if (m) {
    let hex = m[1]!;
    if (hex.length <= 4) hex = [...hex].map((c) => c + c).join('');
    const n = (i: number) => parseInt(hex.slice(i, i + 2), 16);
    return [n(0), n(2), n(4), hex.length === 8 ? n(6) / 255 : 1];
  }
  m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+%?))?\s*\)$/.exec(s);
  if (m) {
    const alpha = m[4] === undefined ? 1 : m[4].endsWith('%') ? Number(m[4].slice(0, -1)) / 100 : Number(m[4]);
    return [Number(m[1]), Number(m[2]), Number(m[3]), Math.max(0, Math.min(1, alpha))];
  }
  return undefined;
}

/** WCAG 2 relative luminance of an opaque colour. */
export function luminance([r, g, b]: Rgb): number {
  const lin = (c: number) => {
    const v = c / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export function contrastRatio(a: Rgb, b: Rgb): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

const mix = (a: Rgb, b: Rgb, t: number): Rgb => [0, 1, 2].map((i) => Math.round(a[i]! + (b[i]! - a[i]!) * t)) as Rgb;

const hex = (c: Rgb): string => `#${c.map((v) => v.toString(16).padStart(2, '0')).join('')}`;

/**
 * `colour` at full strength (its alpha dropped), moved toward white on a dark page (black on a light one) by the
 * least step that gives it `minRatio` against the page. Keeps the hue, so a theme's orange stays orange. An
 * unreadable input falls back to `fallback`.
 */
export function readableOn(colour: string, background: string, minRatio: number, fallback = '#888888'): string {
  const bg = parseColour(background);
  const fg = parseColour(colour) ?? parseColour(fallback);
  if (!bg || !fg) return colour;
  const page: Rgb = [bg[0], bg[1], bg[2]];
  const drawn: Rgb = [fg[0], fg[1], fg[2]];
  if (contrastRatio(drawn, page) >= minRatio) return hex(drawn);
  const toward: Rgb = luminance(page) < 0.18 ? [255, 255, 255] : [0, 0, 0];
  for (let step = 1; step <= 20; step++) {
    const c = mix(drawn, toward, step / 20);
    if (contrastRatio(c, page) >= minRatio) return hex(c);
  }
  return hex(toward);
}
