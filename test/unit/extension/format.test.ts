import { describe, expect, it } from 'vitest';
import { compactArgs, formatAge, formatBytes, formatCount, shortId, truncate } from '../../../src/extension/format';
import { toolIcon, toolKind } from '../../../src/extension/toolKind';
import { findRipgrep, ripgrepCandidates } from '../../../src/extension/ripgrep';
import { readSettings } from '../../../src/extension/settings';
import { parseSliceQuery, sliceHeader, sliceUriParts } from '../../../src/extension/sliceUri';

describe('formatters', () => {
  it('formats bytes and counts', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(200 * 1024)).toBe('200 KB');
    expect(formatBytes(64 * 1024 * 1024)).toBe('64 MB');
    expect(formatBytes(-1)).toBe('?');
    expect(formatCount(1234567)).toBe('1,234,567');
  });

  it('formats ages relative to now', () => {
    const now = Date.UTC(2026, 0, 31);
    expect(formatAge(now - 5_000, now)).toBe('just now');
    expect(formatAge(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(formatAge(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(formatAge(now - 2 * 86_400_000, now)).toBe('2 d ago');
    expect(formatAge(Date.UTC(2025, 0, 1), now)).toBe('2025-01-01');
  });

  it('shortens session ids like commit hashes', () => {
    expect(shortId('5f0c6a52-9d1e-4c1b-8a57-0b8f2f7c1d11')).toBe('5f0c6a52');
    expect(shortId('ses_4a1b')).toBe('ses_4a1b');
    expect(shortId('2026-01-02T03-04-05_abcdef')).toBe('2026-01-02T0…');
  });

  it('makes args compact', () => {
    expect(compactArgs({ command: 'npm   test\n --watch' })).toBe('npm test --watch');
    expect(compactArgs({ file_path: '/a/b.ts', limit: 3 })).toBe('/a/b.ts');
    expect(compactArgs({ n: 1 })).toBe('{"n":1}');
    expect(compactArgs({})).toBe('');
    expect(compactArgs(undefined)).toBe('');
    expect(compactArgs('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(truncate('a b', 10)).toBe('a b');
    // Never half of an emoji (a lone surrogate shows as a replacement character).
    expect(truncate(`${'a'.repeat(8)}😀 done`, 10)).toBe(`${'a'.repeat(8)}…`);
  });
});

describe('tool kinds', () => {
  it('maps tools to codicons', () => {
    expect(toolKind('Bash')).toBe('shell');
    expect(toolKind('Grep')).toBe('search');
    expect(toolKind('WebFetch')).toBe('web');
    expect(toolKind('mcp__github__search')).toBe('mcp');
    expect(toolKind('Read')).toBe('file');
    expect(toolKind(undefined)).toBe('other');
    expect(toolIcon('Bash')).toBe('terminal');
    expect(toolIcon('somethingElse')).toBe('output');
    expect(toolKind('LS')).toBe('search');
  });
});

describe('ripgrep lookup', () => {
  it('prefers the configured path, then VS Code shipped ones', () => {
    const all = ripgrepCandidates('/app', 'linux', 'x64');
    expect(all).toContain('/app/node_modules/@vscode/ripgrep/bin/rg');
    expect(all).toContain('/app/node_modules.asar.unpacked/@vscode/ripgrep/bin/rg');
    expect(all).toContain('/app/node_modules/@vscode/ripgrep-universal/bin/linux-x64/rg');
    expect(findRipgrep('/custom/rg', '/app', (p) => p === '/custom/rg')).toBe('/custom/rg');
    expect(findRipgrep('/custom/rg', '/app', () => false)).toBeUndefined();
    expect(findRipgrep('', '/app', (p) => p.includes('asar.unpacked'))).toContain('asar.unpacked');
    expect(findRipgrep('', '/app', () => false)).toBeUndefined();
  });
});

describe('settings', () => {
  it('reads defaults and clamps bad values', () => {
    const s = readSettings(() => undefined);
    expect(s).toMatchObject({ extraRoots: [], previewBytes: 2048, budgetDelta: 0.1, contextWindow: 200000, useTrash: true, sortBy: 'time' });
    const values: Record<string, unknown> = { extraRoots: ['/a', 3, ''], 'chart.budgetDelta': 7, sources: { pi: false, x: 'no' }, useTrash: false, sortBy: 'size' };
    const t = readSettings((k) => values[k] as never);
    expect(t.extraRoots).toEqual(['/a']);
    expect(t.budgetDelta).toBe(1);
    expect(t.sources).toEqual({ pi: false });
    expect(t.useTrash).toBe(false);
    expect(t.sortBy).toBe('size');
  });

  it('reads `~` in an extra root as the home folder, as a shell does (and only at its start)', () => {
    const roots = ['~', '~/agent logs', '/a/~/b', '~user/x', 'rel'];
    expect(readSettings((k) => (k === 'extraRoots' ? roots : undefined) as never, '/home/me').extraRoots).toEqual(['/home/me', '/home/me/agent logs', '/a/~/b', '~user/x', 'rel']);
  });
});

describe('slice URIs', () => {
  it('round-trips the request and names the range in the title', () => {
    const parts = sliceUriParts({ file: '/tmp/a b/#big?.txt', range: { start: 5, end: 9 } });
    expect(parts.path).toBe('/#big?.txt (lines 5-9)');
    expect(parseSliceQuery(parts.query)).toEqual({ file: '/tmp/a b/#big?.txt', range: { start: 5, end: 9 } });
    expect(parseSliceQuery('file=/a&start=9&end=5')).toBeUndefined();
    expect(parseSliceQuery('start=1&end=5')).toBeUndefined();
  });
});

describe('slice header', () => {
  it('names the range, the total and the size', () => {
    const h = sliceHeader({ file: '/r/big.txt', range: { start: 1000, end: 1010 } }, 60 * 1024 * 1024, 1_940_000, 11);
    expect(h[0]).toBe('# Spillway: lines 1000-1010 of 1,940,000 of big.txt (60 MB, too big for an editor; this read-only view holds only these lines)');
    expect(h[1]).toBe('# File: /r/big.txt');
    expect(h).toHaveLength(3);
  });
});
