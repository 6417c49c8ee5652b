// The context chart page: prompt tokens per turn (line), the per-turn delta
// (bars stacked by what made the turn grow, drawn here so their count is
// known; a drop is a bar below zero, named), the budget-delta threshold,
// compaction marks and spill marks, and a "what ate the context" table. Everything from the host is checked by the
// protocol guards; no text from it is ever parsed as HTML (textContent only).

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { readableOn } from './contrast';
import { isHostToPage, type ChartData, type ChartPart, type ChartTurn, type PageToHost } from './protocol';

declare function acquireVsCodeApi(): { postMessage(msg: PageToHost): void };

const vscode = acquireVsCodeApi();
const $ = (id: string) => document.getElementById(id) as HTMLElement;

let plot: uPlot | undefined;
let data: ChartData | undefined;
let pinned: number | undefined;

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

/**
 * The theme's colours, each made opaque over the page and readable on it: text at WCAG AA (4.5:1), bars and marks
 * at 3:1 (a theme colour with an alpha, drawn over a dark page, was a near-invisible brown).
 */
function theme() {
  const bg = cssVar('--vscode-editor-background', '#1e1e1e');
  const text = (name: string, fallback: string) => readableOn(cssVar(name, fallback), bg, 4.5, fallback);
  const mark = (name: string, fallback: string) => readableOn(cssVar(name, fallback), bg, 3, fallback);
  return {
    fg: text('--vscode-foreground', '#cccccc'),
    bg,
    grid: cssVar('--vscode-editorWidget-border', 'rgba(128,128,128,0.25)'),
    line: mark('--vscode-charts-blue', '#3794ff'),
    bar: mark('--vscode-charts-purple', '#b180d7'),
    over: text('--vscode-charts-red', '#f14c4c'),
    spill: mark('--vscode-charts-orange', '#d18616'),
    compaction: mark('--vscode-charts-green', '#89d185'),
    inline: mark('--vscode-charts-purple', '#b180d7'),
    assistant: mark('--vscode-charts-blue', '#3794ff'),
    user: mark('--vscode-charts-green', '#89d185'),
    other: mark('--vscode-descriptionForeground', '#999999'),
    drop: mark('--vscode-charts-yellow', '#cca700'),
    font: `${cssVar('--vscode-font-size', '12px')} ${cssVar('--vscode-font-family', 'sans-serif')}`,
  };
}

function fmtTokens(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (a >= 1e3) return `${(n / 1e3).toFixed(a >= 1e4 ? 0 : 1)}k`;
  return String(Math.round(n));
}

function fmtBytes(n: number): string {
  const u = ['B', 'KB', 'MB', 'GB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${u[i]}`;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function showHeader(d: ChartData): void {
  $('title').textContent = d.title;
  const spills = d.turns.reduce((n, t) => n + t.spills.length, 0);
  const compactions = d.turns.filter((t) => t.compaction).length;
  const threshold = Math.round(d.budgetDelta * d.contextWindow);
  const drops = d.turns.filter((t) => t.drop && t.drop.tokens > 0).length;
  $('summary').textContent =
    `${d.turns.length} turn${d.turns.length === 1 ? '' : 's'} · ${d.blobCount} blob${d.blobCount === 1 ? '' : 's'} (${fmtBytes(d.spilledBytes)}), ${spills} tied to a turn · ` +
    `${compactions} compaction${compactions === 1 ? '' : 's'} · ${drops} drop${drops === 1 ? '' : 's'} · budget-delta line at ${fmtTokens(threshold)} ` +
    `(${Math.round(d.budgetDelta * 100)}% of ${fmtTokens(d.contextWindow)})`;
  $('saved').textContent = d.savedText;
  showKey();
}

/** Bar colour of each part: spilled tool results stand out from inline ones. */
function partColour(p: Pick<ChartPart, 'kind' | 'spilled'>, t: ReturnType<typeof theme>): string {
  if (p.kind === 'tool-result') return p.spilled ? t.spill : t.inline;
  return t[p.kind];
}

function showKey(): void {
  const t = theme();
  const key = $('key');
  key.replaceChildren();
  const entries: Array<[string, string]> = [
    ['tool result, spilled (digest)', partColour({ kind: 'tool-result', spilled: true }, t)],
    ['tool result, inline', partColour({ kind: 'tool-result', spilled: false }, t)],
    ['assistant output', t.assistant],
    ['user prompt', t.user],
    ['other', t.other],
    ['drop (below zero, named)', t.drop],
  ];
  for (const [label, colour] of entries) {
    const item = el('span', undefined, 'key-item');
    const swatch = el('span', undefined, 'swatch');
    swatch.style.background = colour;
    item.append(swatch, document.createTextNode(label));
    key.append(item);
  }
  key.append(el('span', '◆ turn whose tool calls spilled · green dashes: compaction · red dashes: budget delta', 'key-item'));
}

/** The hovered (or pinned) turn's numbers and spills; spills are buttons that reveal the blob. */
function showDetails(turn: ChartTurn | undefined): void {
  const box = $('details');
  box.replaceChildren();
  if (!turn) {
    box.append(el('p', 'Hover a turn to see its numbers; click a turn with spills to reveal its blobs.', 'hint'));
    return;
  }
  const head = el('p');
  head.append(el('strong', `Turn ${turn.turn}`));
  const when = turn.time !== undefined ? ` · ${new Date(turn.time).toLocaleTimeString()}` : '';
  const drop = turn.drop && turn.drop.tokens > 0 ? ` · ${turn.drop.label}: −${turn.drop.tokens.toLocaleString()}` : turn.compaction ? ' · after compaction' : '';
  head.append(document.createTextNode(` · prompt ${turn.promptTokens.toLocaleString()} tokens · Δ ${turn.delta >= 0 ? '+' : ''}${turn.delta.toLocaleString()}${drop}${when}`));
  box.append(head);
  if (turn.parts.length) {
    // What the turn added, largest first; a spilled result's blob is one click away.
    const list = el('ul', undefined, 'parts');
    const t = theme();
    for (const p of [...turn.parts].sort((a, b) => b.tokens - a.tokens)) {
      const li = el('li');
      const swatch = el('span', undefined, 'swatch');
      swatch.style.background = partColour(p, t);
      li.append(swatch, document.createTextNode(`+${p.tokens.toLocaleString()} ${p.label}${p.kind === 'tool-result' ? (p.spilled ? ' (spilled: its digest)' : ' (inline)') : ''} `));
      if (p.blobId) {
        const b = el('button', 'reveal blob', 'reveal-part');
        b.title = 'Reveal the blob with the full output in the Spills tree';
        const id = p.blobId;
        b.addEventListener('click', () => vscode.postMessage({ type: 'revealBlob', blobId: id }));
        li.append(b);
      }
      list.append(li);
    }
    box.append(list);
  }
  if (turn.spills.length) {
    const list = el('ul', undefined, 'spills');
    for (const s of turn.spills) {
      const li = el('li');
      li.append(revealButton(s.label, s.bytes, s.blobId));
      list.append(li);
    }
    box.append(list);
  }
}

function revealButton(label: string, bytes: number, blobId: string): HTMLButtonElement {
  const b = el('button', `${label} (${fmtBytes(bytes)})`, 'reveal');
  b.title = 'Reveal this blob in the Spills tree';
  b.addEventListener('click', () => vscode.postMessage({ type: 'revealBlob', blobId }));
  return b;
}

/** Accessible table of the same numbers (screen readers, copy-paste). */
function showTable(d: ChartData): void {
  const old = document.getElementById('turns');
  old?.remove();
  const details = el('details');
  details.id = 'turns';
  details.append(el('summary', 'Table of turns'));
  const table = el('table');
  const hr = el('tr');
  for (const h of ['Turn', 'Prompt tokens', 'Delta', 'Made of', 'Drop', 'Spills']) hr.append(el('th', h));
  table.append(hr);
  for (const t of d.turns) {
    const tr = el('tr');
    const spills = el('td');
    for (const s of t.spills) spills.append(revealButton(s.label, s.bytes, s.blobId));
    const made = t.parts.length ? [...t.parts].sort((a, b) => b.tokens - a.tokens).map((p) => `${p.label} ${fmtTokens(p.tokens)}`).join(', ') : '';
    const drop = t.drop && t.drop.tokens > 0 ? `${t.drop.label} −${fmtTokens(t.drop.tokens)}` : t.compaction ? 'compaction' : '';
    tr.append(el('td', String(t.turn)), el('td', t.promptTokens.toLocaleString()), el('td', t.delta.toLocaleString()), el('td', made), el('td', drop), spills);
    table.append(tr);
  }
  details.append(table);
  document.querySelector('main')?.append(details);
}

/** "What ate the context": the largest tool results, their tool, size, whether spilled and read back. */
function showContributors(d: ChartData): void {
  document.getElementById('contributors')?.remove();
  const section = el('section');
  section.id = 'contributors';
  section.append(el('h2', 'What ate the context'));
  if (!d.contributors.length) {
    section.append(el('p', 'No tool results in this session.', 'hint'));
  } else {
    const table = el('table');
    const hr = el('tr');
    for (const h of ['Turn', 'Tool', 'Tokens added', 'Spilled', 'Read back']) hr.append(el('th', h));
    table.append(hr);
    for (const c of d.contributors) {
      const tr = el('tr');
      const spilled = el('td');
      if (c.spilled && c.blobId) spilled.append(revealButton(c.label ?? c.tool, c.bytes ?? 0, c.blobId));
      else spilled.textContent = c.spilled ? 'yes' : 'no (inline)';
      const readBack = c.readBack === undefined ? '' : c.readBack === 0 ? 'never' : `${c.readBack}×`;
      tr.append(el('td', String(c.turn)), el('td', c.tool), el('td', c.tokens.toLocaleString()), spilled, el('td', readBack));
      table.append(tr);
    }
    section.append(table);
  }
  const turns = document.getElementById('turns');
  if (turns) turns.before(section);
  else document.querySelector('main')?.append(section);
}

function drawOverlay(u: uPlot): void {
  if (!data) return;
  const t = theme();
  const ctx = u.ctx;
  const { left, top, width, height } = u.bbox;
  const threshold = data.budgetDelta * data.contextWindow;
  const xs = u.data[0];
  const n = xs.length;
  const slot = n > 0 ? width / n : width;
  const barW = Math.max(1, Math.min(slot * 0.6, 40 * devicePixelRatio));
  const y0 = u.valToPos(0, 'y', true);
  let bars = 0;
  let marks = 0;
  let drops = 0;
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top, width, height);
  ctx.clip();
  for (let i = 0; i < n; i++) {
    const turn = data.turns[i];
    if (!turn) continue;
    const x = u.valToPos(xs[i] ?? 0, 'x', true);
    // Opaque: the colours were chosen for their contrast with the page as they are.
    ctx.globalAlpha = 1;
    if (turn.delta < 0) {
      // A drop: below zero, named.
      const y = u.valToPos(turn.delta, 'y', true);
      ctx.fillStyle = t.drop;
      ctx.fillRect(x - barW / 2, y0, barW, Math.max(1, y - y0));
      if (turn.drop) {
        ctx.globalAlpha = 1;
        ctx.fillStyle = t.fg;
        ctx.font = `${Math.round(11 * devicePixelRatio)}px ${cssVar('--vscode-font-family', 'sans-serif')}`;
        // Centred over the drop's own bar, moved inward only as far as the plot's edges need.
        const text = `${turn.drop.label} −${fmtTokens(turn.drop.tokens)}`;
        const w = ctx.measureText(text).width;
        ctx.textAlign = 'left';
        ctx.textBaseline = 'top';
        ctx.fillText(text, Math.max(left, Math.min(x - w / 2, left + width - w)), Math.min(y, top + height) - 14 * devicePixelRatio);
      }
      drops++;
    } else {
      // Stacked by part, largest at the bottom; outlined red over the budget-delta line.
      let base = 0;
      const parts = turn.parts.length ? [...turn.parts].sort((a, b) => b.tokens - a.tokens) : [{ kind: 'other' as const, spilled: false, tokens: turn.delta }];
      for (const p of parts) {
        const yA = u.valToPos(base, 'y', true);
        const yB = u.valToPos(base + p.tokens, 'y', true);
        ctx.fillStyle = partColour(p, t);
        ctx.fillRect(x - barW / 2, yB, barW, Math.max(1, yA - yB));
        base += p.tokens;
      }
      if (turn.delta >= threshold && threshold > 0) {
        ctx.globalAlpha = 1;
        ctx.strokeStyle = t.over;
        ctx.lineWidth = 2 * devicePixelRatio;
        const yTop = u.valToPos(turn.delta, 'y', true);
        ctx.strokeRect(x - barW / 2, yTop, barW, y0 - yTop);
      }
    }
    bars++;
    if (turn.compaction) {
      ctx.globalAlpha = 1;
      ctx.strokeStyle = t.compaction;
      ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
      ctx.lineWidth = devicePixelRatio;
      ctx.beginPath();
      ctx.moveTo(x - slot / 2, top);
      ctx.lineTo(x - slot / 2, top + height);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (turn.spills.length) {
      // A diamond on the prompt line marks a turn whose tool calls spilled.
      const py = u.valToPos(turn.promptTokens, 'y', true);
      const r = 6 * devicePixelRatio;
      ctx.globalAlpha = 1;
      ctx.fillStyle = t.spill;
      ctx.beginPath();
      ctx.moveTo(x, py - r);
      ctx.lineTo(x + r, py);
      ctx.lineTo(x, py + r);
      ctx.lineTo(x - r, py);
      ctx.closePath();
      ctx.fill();
      // An outline in the page colour keeps the mark readable over the line in any theme.
      ctx.strokeStyle = t.bg;
      ctx.lineWidth = devicePixelRatio;
      ctx.stroke();
      marks++;
    }
  }
  if (threshold > 0) {
    const ty = u.valToPos(threshold, 'y', true);
    ctx.globalAlpha = 1;
    ctx.strokeStyle = t.over;
    ctx.lineWidth = devicePixelRatio;
    ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
    ctx.beginPath();
    ctx.moveTo(left, ty);
    ctx.lineTo(left + width, ty);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = t.over;
    ctx.font = `${Math.round(11 * devicePixelRatio)}px ${cssVar('--vscode-font-family', 'sans-serif')}`;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'bottom';
    ctx.fillText(`budget delta ${fmtTokens(threshold)}`, left + width - 4 * devicePixelRatio, ty - 3 * devicePixelRatio);
  }
  ctx.restore();
  // What was actually painted, for tests and for anyone inspecting the page.
  $('chart').dataset.bars = String(bars);
  $('chart').dataset.spillMarks = String(marks);
  $('chart').dataset.drops = String(drops);
  $('chart').dataset.palette = JSON.stringify({ bg: t.bg, fg: t.fg, spill: t.spill, inline: t.inline, line: t.line, drop: t.drop, over: t.over, other: t.other });
}

function render(d: ChartData): void {
  data = d;
  pinned = undefined;
  showHeader(d);
  showTable(d);
  showContributors(d);
  showDetails(undefined);
  $('message').hidden = true;
  plot?.destroy();
  const t = theme();
  const xs = d.turns.map((x) => x.turn);
  const prompt = d.turns.map((x) => x.promptTokens);
  const delta = d.turns.map((x) => x.delta);
  const threshold = d.budgetDelta * d.contextWindow;
  const box = $('chart');
  const opts: uPlot.Options = {
    width: Math.max(320, box.clientWidth),
    height: chartHeight(),
    padding: [12, 12, 0, 0],
    scales: {
      x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] },
      y: { range: (_u, min, max) => [Math.min(0, min) * 1.15, Math.max(max, threshold) * 1.08] },
    },
    axes: [
      { stroke: t.fg, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid }, label: 'turn', font: t.font, labelFont: t.font, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500] },
      { stroke: t.fg, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid }, values: (_u, v) => v.map(fmtTokens), label: 'tokens', font: t.font, labelFont: t.font, size: 56 },
    ],
    series: [
      // The same dash as the other series when no turn is hovered (uPlot's default is "--").
      { label: 'turn', value: (_u, v) => (v == null ? '—' : String(v)) },
      { label: 'prompt tokens', stroke: t.line, width: 2, points: { show: d.turns.length <= 60, fill: t.bg }, value: (_u, v) => (v == null ? '—' : v.toLocaleString()) },
      // Bars are painted by the draw hook; the series keeps the legend and hover value.
      { label: 'delta', stroke: t.bar, fill: t.bar, paths: () => null, points: { show: false }, value: (_u, v) => (v == null ? '—' : v.toLocaleString()) },
    ],
    legend: { show: true },
    cursor: { drag: { x: false, y: false }, points: { show: true } },
    hooks: {
      draw: [drawOverlay],
      setCursor: [
        (u) => {
          if (pinned !== undefined) return;
          const idx = u.cursor.idx;
          showDetails(idx == null ? undefined : d.turns[idx]);
        },
      ],
    },
  };
  plot = new uPlot(opts, [xs, prompt, delta], box);
  plot.over.addEventListener('click', () => {
    const idx = plot?.cursor.idx;
    const turn = idx == null ? undefined : d.turns[idx];
    pinned = turn && idx != null && pinned !== idx ? idx : undefined;
    showDetails(turn);
    const first = turn?.spills[0];
    if (first) vscode.postMessage({ type: 'revealBlob', blobId: first.blobId });
  });
}

function showMessage(text: string): void {
  $('title').textContent = 'Context chart';
  const m = $('message');
  m.textContent = text;
  m.hidden = false;
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const msg = event.data;
  if (!isHostToPage(msg)) return;
  if (msg.type === 'chartData') {
    if (msg.data.turns.length === 0) showMessage('This session has no API calls with token usage yet.');
    else render(msg.data);
  } else showMessage(msg.message);
});

window.addEventListener('resize', () => {
  if (plot) plot.setSize({ width: Math.max(320, $('chart').clientWidth), height: chartHeight() });
});

/** Room kept under the chart for a turn's details (the CSS gives them at most this much, scrolling beyond). */
const DETAILS_PX = 170;

/** The chart as tall as the window allows once the header and a turn's details are on screen too. */
function chartHeight(): number {
  const header = document.getElementById('header')?.offsetHeight ?? 120;
  return Math.max(200, Math.min(480, window.innerHeight - header - DETAILS_PX - 40));
}

// Theme changes swap the body class: redraw with the new colours.
new MutationObserver(() => data && render(data)).observe(document.body, { attributes: true, attributeFilter: ['class'] });

vscode.postMessage({ type: 'ready' });
