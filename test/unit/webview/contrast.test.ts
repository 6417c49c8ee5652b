import { describe, expect, it } from 'vitest';
import { contrastRatio, parseColour, readableOn, type Rgb } from '../../../src/webview/contrast';

const rgb = (c: string): Rgb => {
  const p = parseColour(c)!;
  return [p[0], p[1], p[2]];
};

// VS Code's own defaults: charts.orange is minimap.findMatchHighlight, #EA5C0055 in the light and dark themes;
// the Dark Modern and Light Modern editor backgrounds.
const ORANGE = '#EA5C0055';
const DARK = '#1F1F1F';
const LIGHT = '#FFFFFF';

describe('chart colours readable in any theme', () => {
  it('parses the forms CSS variables take', () => {
    expect(parseColour('#EA5C0055')).toEqual([234, 92, 0, 0x55 / 255]);
    expect(parseColour('#abc')).toEqual([170, 187, 204, 1]);
    expect(parseColour('rgba(10, 20, 30, 0.5)')).toEqual([10, 20, 30, 0.5]);
    expect(parseColour('rgb(10 20 30 / 50%)')).toEqual([10, 20, 30, 0.5]);
    expect(parseColour('var(--x)')).toBeUndefined();
  });

  it('a half-transparent orange drawn as it is over a dark page is the near-invisible brown', () => {
    // What the chart drew before: the colour composited over the page.
    const [r, g, b, a] = parseColour(ORANGE)!;
    const bg = rgb(DARK);
    const drawn: Rgb = [Math.round(bg[0] + (r - bg[0]) * a), Math.round(bg[1] + (g - bg[1]) * a), Math.round(bg[2] + (b - bg[2]) * a)];
    expect(contrastRatio(drawn, bg)).toBeLessThan(2);
  });

  it('draws the theme’s orange at full strength: no brown on dark, no peach on light', () => {
    expect(readableOn(ORANGE, DARK, 3)).toBe('#ea5c00');
    expect(readableOn(ORANGE, LIGHT, 3)).toBe('#ea5c00');
  });

  for (const [name, page] of [['dark', DARK], ['light', LIGHT]] as const) {
    it(`the spilled colour reaches 3:1 for marks and 4.5:1 for text on the ${name} page, and stays orange`, () => {
      for (const min of [3, 4.5]) {
        const c = readableOn(ORANGE, page, min);
        expect(contrastRatio(rgb(c), rgb(page))).toBeGreaterThanOrEqual(min);
        const [r, g, b] = rgb(c);
        expect(r).toBeGreaterThan(g);
        expect(g).toBeGreaterThanOrEqual(b);
      }
    });
  }

  it('leaves a colour that already reads well as it is (made opaque)', () => {
    expect(readableOn('#89D185', DARK, 3)).toBe('#89d185');
    expect(readableOn('#388A34', LIGHT, 3)).toBe('#388a34');
    // Unparseable: the fallback, made readable.
    expect(contrastRatio(rgb(readableOn('not a colour', DARK, 3, '#d18616')), rgb(DARK))).toBeGreaterThanOrEqual(3);
  });
});
