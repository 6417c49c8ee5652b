import { describe, expect, it } from 'vitest';
import type { BlobInfo, SessionInfo, TurnSeries } from '../../../src/catalog/types';
import { savedSentence, toChartData } from '../../../src/extension/chartModel';
import { isChartData } from '../../../src/webview/protocol';
import {
  agentDescription,
  blobFacts,
  blobIcon,
  blobLabel,
  blobRow,
  blobTooltipMarkdown,
  buildTree,
  contextValue,
  EDITOR_LIMIT_BYTES,
  fenceFor,
  limitShowing,
  moreRow,
  nodeId,
  page,
  PAGE,
  parseFilter,
  parseSize,
  sessionChildren,
  sessionFacts,
  sessionLabel,
  sessionNode,
  sessionRow,
  twinSessions,
  sessionTooltipParagraphs,
  shownOf,
} from '../../../src/extension/treeModel';

function blob(over: Partial<BlobInfo> & { path: string }): BlobInfo {
  return {
    key: over.path,
    sessionKey: 's',
    name: over.path.split('/').pop() ?? '',
    kind: 'tool-result',
    bytes: 1000,
    createdAt: '2026-01-01T00:00:00Z',
    mtimeMs: 0,
    attribution: 'transcript',
    ...over,
  };
}

function session(over: Partial<SessionInfo> & { key: string; blobs: BlobInfo[] }): SessionInfo {
  return {
    source: 'claude-code',
    id: over.key,
    dir: `/d/${over.key}`,
    root: '/d',
    bytes: over.blobs.reduce((s, b) => s + b.bytes, 0),
    updatedAt: '2026-01-01T00:00:00Z',
    skipped: 0,
    notes: [],
    ...over,
  };
}

const bash = blob({ path: '/d/a/b1.txt', tool: 'Bash', args: 'npm test', bytes: 40_000, lines: 812, createdAt: '2026-01-02T00:00:00Z' });
const grep = blob({ path: '/d/a/t2.txt', tool: 'Grep', args: 'TODO', bytes: 90_000, createdAt: '2026-01-01T00:00:00Z' });
const big = blob({ path: '/d/b/huge.txt', tool: 'Bash', args: 'cat log', bytes: EDITOR_LIMIT_BYTES + 1, createdAt: '2026-01-03T00:00:00Z' });
const older = session({ key: 'claude-code:/d/a', title: 'fix the build', cwd: '/home/dev/api', blobs: [bash, grep], updatedAt: '2026-01-02T00:00:00Z', transcript: '/d/a.jsonl' });
const newer = session({ key: 'claude-code:/d/b', cwd: '/home/dev/web', blobs: [big], updatedAt: '2026-01-03T00:00:00Z' });
const pi = session({ key: 'pi:/p', source: 'pi', blobs: [blob({ path: '/p/x.log', kind: 'shell-output', bytes: 10 })] });
const empty = session({ key: 'claude-code:/d/e', blobs: [] });

describe('tree model', () => {
  it('groups by agent, newest session first, and drops empty sessions', () => {
    const agents = buildTree([older, newer, pi, empty], {}, 'time');
    expect(agents.map((a) => a.source)).toEqual(['claude-code', 'pi']);
    expect(agents[0]?.sessions.map((s) => s.session.key)).toEqual(['claude-code:/d/b', 'claude-code:/d/a']);
  });

  it('draws session and agent rows without listing any blob while no filter is on', () => {
    // Blobs that may be counted but not read: a tree of 100,000 lists a session's only when it is expanded.
    const unlisted = (s: SessionInfo): SessionInfo => ({
      ...s,
      blobs: new Proxy(s.blobs, {
        get: (target, prop) => {
          if (prop === 'length') return target.length;
          throw new Error(`blobs.${String(prop)} read`);
        },
      }),
    });
    const agents = buildTree([unlisted(older), unlisted(newer)], {}, 'size');
    const rows = agents[0]!.sessions;
    expect(rows.map((s) => sessionRow(s, Date.parse('2026-01-03T00:00:00Z')))).toEqual([
      { label: 'just now · web', description: '1 blob · 50 MB' },
      { label: '1 d ago · fix the build', description: '2 blobs · 127 KB' },
    ]);
    expect(agentDescription(rows)).toBe('3 blobs · 50 MB');
    expect(agentDescription([{ ...rows[1]!, shown: { count: 2_500, bytes: 195 << 20 } }])).toBe('2,500 blobs · 195 MB');
    expect(agentDescription([{ ...rows[1]!, shown: { count: 100_000, bytes: 195 << 20 } }])).toBe('100k blobs · 195 MB');
    // Expanding the session lists them (and a filter has to look at each).
    expect(() => sessionChildren(rows[0]!.session, {}, 'time')).toThrow(/^blobs\..+ read$/);
    expect(() => buildTree([unlisted(older)], { tool: 'grep' }, 'time')).toThrow(/^blobs\..+ read$/);
  });

  it('sorts by size when asked', () => {
    const agents = buildTree([older, newer], {}, 'size');
    expect(agents[0]?.sessions[0]?.session.key).toBe('claude-code:/d/b');
    expect(sessionChildren(older, {}, 'size').map((b) => b.tool)).toEqual(['Grep', 'Bash']);
    expect(sessionChildren(older, {}, 'time').map((b) => b.tool)).toEqual(['Bash', 'Grep']);
  });

  it('labels sessions from the title, else the cwd, and describes them', () => {
    expect(sessionLabel(older)).toBe('fix the build');
    expect(sessionLabel(newer)).toBe('web');
    expect(sessionFacts(shownOf(older, {}))).toBe('2 blobs · 127 KB');
  });

  it('tells sessions with the same title apart by age in the row and short id in the tooltip', () => {
    const now = Date.parse('2026-01-02T03:00:00Z');
    const a = session({ key: 'claude-code:/d/x', id: '5f0c6a52-9d1e-4c1b-8a57-0b8f2f7c1d11', title: 'run the build', blobs: [bash], updatedAt: '2026-01-02T01:00:00Z' });
    const b = session({ key: 'claude-code:/d/y', id: '0b8f2f7c-1d11-4c1b-8a57-5f0c6a529d1e', title: 'run the build', blobs: [grep], updatedAt: '2026-01-02T02:55:00Z' });
    expect(sessionLabel(a)).toBe(sessionLabel(b));
    expect(sessionFacts(shownOf(a, {}), a.updatedAt, now)).toBe('2 h ago · 1 blob · 39 KB');
    expect(sessionFacts(shownOf(b, {}), b.updatedAt, now)).toBe('5 min ago · 1 blob · 88 KB');
    // No usable time: the age is left out rather than shown wrong.
    expect(sessionFacts(shownOf(a, {}), 'not a date', now)).toBe('1 blob · 39 KB');
    const tipA = sessionTooltipParagraphs(a, now);
    const tipB = sessionTooltipParagraphs(b, now);
    expect(tipA[0]).toBe('run the build');
    expect(tipA[1]).toMatch(/^Claude Code session 5f0c6a52 · updated 2 h ago \(.+\)$/);
    expect(tipB[1]).toMatch(/^Claude Code session 0b8f2f7c · updated 5 min ago/);
    // The full id and the folder stay available (to resume the session, to find the files).
    expect(tipA).toContain(`id: ${a.id}`);
    expect(tipA).toContain('/d/claude-code:/d/x');
    expect(sessionTooltipParagraphs({ ...a, cwd: '/home/dev/api', notes: ['transcript missing'] }, now)).toEqual(expect.arrayContaining(['cwd: /home/dev/api', 'transcript missing']));
  });

  it('labels blobs with tool + args, size + lines, and an icon per tool', () => {
    expect(blobLabel(bash)).toBe('Bash npm test');
    expect(blobFacts(bash)).toBe('39 KB · 812 lines');
    expect(blobFacts({ ...bash, binary: true })).toBe('39 KB · binary');
    expect(blobIcon(bash)).toBe('terminal');
    expect(blobIcon(grep)).toBe('search');
  });

  it('puts what tells rows apart first: a blob’s size and lines, a session’s age and title', () => {
    const now = Date.parse('2026-01-02T03:00:00Z');
    expect(blobRow(bash)).toEqual({ label: '39 KB · 812 lines', description: 'Bash npm test' });
    // Two sessions of one agent read differently without hovering: the title is in the label, after the age.
    expect(sessionRow(sessionNode(older, {}), now)).toEqual({ label: '3 h ago · fix the build', description: '2 blobs · 127 KB' });
    expect(sessionRow(sessionNode({ ...older, updatedAt: 'not a date' }, {}), now).label).toBe('fix the build');
    // Two of one agent's sessions that read the same (a prompt repeated, the same minute): the short id tells them apart.
    const twinA = { ...older, key: 'claude-code:/d/t1', id: '178b4d38-13b0-42e7-9299-816fbc78abe5', title: 'run the build' };
    const twinB = { ...older, key: 'claude-code:/d/t2', id: 'a8596db4-f8da-40c2-9db5-c17f7cb847a8', title: 'run the build' };
    const twins = twinSessions([twinA, twinB, older, { ...twinA, key: 'pi:/p/t', source: 'pi' as const }], now);
    expect([...twins].sort()).toEqual(['claude-code:/d/t1', 'claude-code:/d/t2']);
    expect(sessionRow(sessionNode(twinA, {}), now, true).label).toBe('3 h ago · 178b4d38 · run the build');
    expect(sessionRow(sessionNode(twinB, {}), now, true).label).toBe('3 h ago · a8596db4 · run the build');
    // The row counts the blobs it shows (a filter may hide some).
    expect(sessionRow(sessionNode(older, { tool: 'bash' }), now).description).toBe('1 blob · 39 KB');
  });

  it('names an unattributed output by its command, else its first line, not "shell"', () => {
    const shell = pi.blobs[0]!;
    expect(blobLabel(shell)).toBe('shell output');
    expect(blobLabel({ ...shell, preview: '\n\n  > tsc -p . && vitest run  \nsrc/a.ts(3,1): error\n' })).toBe('> tsc -p . && vitest run');
    expect(blobLabel({ ...shell, args: 'make -j8' })).toBe('make -j8');
    expect(blobLabel({ ...shell, preview: '\u0000\u0001', binary: true })).toBe('shell output');
    expect(blobLabel({ ...shell, preview: 'x'.repeat(200) })).toHaveLength(60);
    // A first line that says nothing (a counter, a rule): what the output is and its file's name.
    expect(blobLabel({ ...shell, name: 'b9wyd9vmp.txt', preview: '1\n2\n3\n' })).toBe('Bash output b9wyd9vmp');
    expect(blobLabel({ ...shell, name: 'pi-bash-0123456789abcdef.log', preview: '----\n0.00\n' })).toBe('Bash output pi-bash-0123456789abcdef');
    expect(blobLabel({ ...shell, preview: 'ERROR: build failed\n' })).toBe('ERROR: build failed');
  });

  it('gives stable ids and a contextValue grammar', () => {
    expect(nodeId({ kind: 'blob', blob: bash, session: older })).toBe('blob:/d/a/b1.txt');
    expect(nodeId(sessionNode(older, {}))).toBe('session:claude-code:/d/a');
    expect(contextValue({ kind: 'blob', blob: big, session: newer })).toBe('spillway:blob+big');
    expect(contextValue({ kind: 'blob', blob: bash, session: older })).toBe('spillway:blob');
    expect(contextValue(sessionNode(older, {}))).toMatch(/^spillway:session.*\+chart/);
    expect(contextValue(sessionNode(newer, {}))).toBe('spillway:session');
  });

  it('filters by tool, size and text', () => {
    const f = parseFilter('tool:grep >50KB');
    expect('filter' in f && f.filter).toEqual({ tool: 'grep', minBytes: 50 * 1024 });
    if (!('filter' in f)) throw new Error('unreachable');
    const agents = buildTree([older, newer, pi], f.filter, 'time');
    expect(agents.flatMap((a) => a.sessions.flatMap((s) => sessionChildren(s.session, f.filter, 'time').map((b) => b.path)))).toEqual(['/d/a/t2.txt']);
    // Rows and the agent count what the filter shows, without listing it.
    expect(agents.flatMap((a) => a.sessions.map((s) => [s.session.key, s.shown]))).toEqual([['claude-code:/d/a', { count: 1, bytes: 90_000 }]]);
    expect(agentDescription(agents[0]!.sessions)).toBe('1 blob · 88 KB');
    const text = parseFilter('npm');
    if (!('filter' in text)) throw new Error('unreachable');
    expect(buildTree([older, newer], text.filter, 'time').flatMap((a) => a.sessions.map((s) => s.session.key))).toEqual(['claude-code:/d/a']);
    expect(parseFilter('>lots')).toHaveProperty('error');
    expect(parseSize('1.5 MB')).toBe(1.5 * 1024 * 1024);
    expect(parseSize('7')).toBe(7);
  });

  it('builds a tooltip whose fence the preview cannot close', () => {
    const preview = 'line 1\n```\n<script>alert(1)</script>\n````x';
    expect(fenceFor(preview)).toBe('`````');
    const md = blobTooltipMarkdown(bash, older, preview, 2048);
    const fence = '`````';
    const start = md.indexOf(`${fence}text\n`);
    expect(start).toBeGreaterThan(0);
    expect(md.slice(start + fence.length + 5)).toContain(`${preview}\n${fence}`);
    expect(md).toContain('812 lines');
    expect(md).toContain('/d/a/b1.txt');
    const cut = blobTooltipMarkdown(bash, older, 'x'.repeat(5000), 100);
    expect(cut).toContain(`${'x'.repeat(100)}\n…`);
    expect(cut).not.toContain('x'.repeat(101));
    expect(blobTooltipMarkdown({ ...bash, binary: true }, older, '\u0000', 100)).toContain('Binary content');
  });
});

describe('more rows than a page', () => {
  // Newest first: session i was updated i minutes before the first.
  const many = (n: number): SessionInfo[] =>
    Array.from({ length: n }, (_, i) => session({ key: `claude-code:/d/s${i}`, blobs: [blob({ path: `/d/s${i}/b.txt` })], updatedAt: new Date(Date.UTC(2026, 0, 2) - i * 60_000).toISOString() }));
  const agentOf = (n: number) => buildTree(many(n), {}, 'time')[0]!;

  it("lists a page of an agent's sessions, then a row that says how many more it shows", () => {
    const agent = agentOf(PAGE * 2 + 10);
    const rows = page(agent, agent.sessions, PAGE);
    expect(rows).toHaveLength(PAGE + 1);
    expect(rows.slice(0, PAGE)).toEqual(agent.sessions.slice(0, PAGE));
    const more = rows[PAGE]!;
    expect(more).toEqual({ kind: 'more', parent: agent, shown: PAGE, total: PAGE * 2 + 10 });
    expect(more.kind === 'more' && moreRow(more)).toEqual({
      label: `Show ${PAGE} more`,
      description: `${PAGE} of ${PAGE * 2 + 10}`,
      tooltip: `${PAGE} of ${PAGE * 2 + 10} Claude Code sessions listed. Filter the tree or sort it by size to find others.`,
    });
    expect(nodeId(more)).toBe('more:agent:claude-code');
    expect(contextValue(more)).toBe('spillway:more');
    // The last page says how many are left; the whole list has no such row.
    const last = page(agent, agent.sessions, PAGE * 2).at(-1)!;
    expect(last.kind === 'more' && moreRow(last)).toMatchObject({ label: 'Show 10 more', description: `${PAGE * 2} of ${PAGE * 2 + 10}` });
    expect(page(agent, agent.sessions, PAGE * 3)).toEqual(agent.sessions);
    // The agent's row still counts every session's blobs.
    expect(agentDescription(agent.sessions)).toMatch(/^410 blobs · /);
  });

  it("lists a page of a session's blobs the same way, under an id of its own", () => {
    const big = sessionNode(session({ key: 'claude-code:/d/big', blobs: Array.from({ length: PAGE + 1 }, (_, i) => blob({ path: `/d/big/${i}.txt` })) }), {});
    const rows = page(big, sessionChildren(big.session, {}, 'time'), PAGE);
    const more = rows.at(-1)!;
    expect(more).toMatchObject({ kind: 'more', parent: big, shown: PAGE, total: PAGE + 1 });
    expect(more.kind === 'more' && moreRow(more)).toEqual({ label: 'Show 1 more', description: `${PAGE} of ${PAGE + 1}`, tooltip: `${PAGE} of ${PAGE + 1} blobs of this session listed. Filter the tree or sort it by size to find others.` });
    expect(more.kind === 'more' && nodeId(more)).toBe('more:session:claude-code:/d/big');
  });

  it('lists no such row when every row fits', () => {
    const agent = agentOf(PAGE);
    expect(page(agent, agent.sessions, PAGE)).toEqual(agent.sessions);
  });

  it('lists whole pages up to a row to reveal past them, never fewer than listed', () => {
    expect(limitShowing(0, PAGE)).toBe(PAGE);
    expect(limitShowing(PAGE - 1, PAGE)).toBe(PAGE);
    expect(limitShowing(PAGE, PAGE)).toBe(PAGE * 2);
    expect(limitShowing(PAGE * 3 - 1, PAGE)).toBe(PAGE * 3);
    expect(limitShowing(5, PAGE * 2)).toBe(PAGE * 2);
    // A row no longer there (deleted meanwhile) changes nothing.
    expect(limitShowing(-1, PAGE)).toBe(PAGE);
  });
});

describe('chart data', () => {
  it('maps turns, their parts and drops, the largest contributors and the saved estimate, and passes the protocol guard', () => {
    const series: TurnSeries = {
      sessionKey: older.key,
      compactions: 1,
      skipped: 0,
      blobs: [{ key: bash.key, path: bash.path, tool: 'Bash', bytes: bash.bytes, turn: 2, readBack: 2, madeBy: 'spillway' }],
      tokensSaved: { charsPerToken: 4, tokens: 4321, contextTokens: 0, calls: 1, agentSpills: 1, blobs: [{ key: bash.key, bodyTokens: 10_000, baselineTokens: 10_000, counted: true, digestTokens: 500, resentTurns: 1, saved: 9500, digestKnown: true }], blobsWithoutTurn: 0 },
      points: [
        { index: 1, timestamp: '2026-01-01T00:00:00Z', promptTokens: 1000, delta: 1000, outputTokens: 5, compaction: false, blobs: [], parts: [{ kind: 'user', tokens: 10 }, { kind: 'other', tokens: 990 }], drop: null },
        {
          index: 2, timestamp: 'bad', promptTokens: 9000, delta: 8000, outputTokens: 5, compaction: false, blobs: [bash.key, '/gone'],
          parts: [{ kind: 'assistant', tokens: 5 }, { kind: 'tool-result', tool: 'Bash', toolCallId: 't1', tokens: 500, spilled: true, path: bash.path }, { kind: 'tool-result', tool: 'Read', toolCallId: 't2', tokens: 7000, spilled: false }, { kind: 'other', tokens: 495 }],
          drop: null,
        },
        { index: 3, timestamp: '2026-01-01T00:01:00Z', promptTokens: 2000, delta: -7000, outputTokens: 5, compaction: true, blobs: [], parts: [], drop: { kind: 'compaction', tokens: 7000 } },
      ],
    };
    const d = toChartData(older, series, { contextWindow: 100_000, budgetDelta: 0.05 });
    expect(isChartData(d)).toBe(true);
    expect(d.turns.map((t) => t.delta)).toEqual([1000, 8000, -7000]);
    expect(d.turns[1]?.spills).toEqual([{ blobId: bash.key, label: 'Bash npm test', bytes: 40_000 }]);
    expect(d.turns[1]?.parts.map((p) => [p.label, p.tokens, p.spilled, p.blobId])).toEqual([
      ['assistant output', 5, false, undefined],
      ['Bash', 500, true, bash.key],
      ['Read', 7000, false, undefined],
      ['other (system prompt, tools, reminders)', 495, false, undefined],
    ]);
    expect(d.turns[2]?.drop).toEqual({ label: 'compaction', tokens: 7000 });
    expect(d.turns[1]?.time).toBeUndefined();
    expect(d.turns[2]?.compaction).toBe(true);
    // The largest first: the inline Read, then the spilled Bash with its blob and read-backs.
    expect(d.contributors).toEqual([
      { turn: 2, tool: 'Read', tokens: 7000, spilled: false },
      { turn: 2, tool: 'Bash', tokens: 500, spilled: true, blobId: bash.key, label: 'Bash npm test', bytes: 40_000, readBack: 2 },
    ]);
    expect(d.tokensSaved).toBe(4321);
    expect(d.savedText).toBe(
      "Spillway (est., 4 chars/token, against what Claude Code would have shown without it): context now ≈0 tokens smaller; ≈4.3k input tokens not re-sent over 1 call. 1 blob is Claude Code's own spill (Claude Code already showed only a preview): not counted.",
    );
    expect(d.title).toBe('fix the build — Claude Code');
  });

  it("says Spillway saved about nothing where the agent spilled everything itself", () => {
    const saved = { charsPerToken: 4, tokens: 0, contextTokens: 0, calls: 0, agentSpills: 3, blobs: [], blobsWithoutTurn: 0 };
    expect(savedSentence(saved, 'Claude Code')).toBe("Spillway saved ≈0 tokens here: it spilled nothing in this session. 3 blobs are Claude Code's own spills (Claude Code already showed only a preview): not counted.");
  });
});
