import { describe, expect, it } from 'vitest';
import { escapeControls, human, table } from '../../../src/cli/format';

describe('escapeControls', () => {
  it('shows C0, DEL, C1, bidi overrides and line separators as escapes; keeps tab and ordinary text', () => {
    expect(escapeControls('a\x1b[2Jb')).toBe('a\\x1b[2Jb');
    expect(escapeControls('line\nfake\r')).toBe('line\\nfake\\r');
    expect(escapeControls('\x00\x7f\x9b')).toBe('\\x00\\x7f\\x9b');
    expect(escapeControls('abc\u202egnp.exe\u2066\u2028')).toBe('abc\\u202egnp.exe\\u2066\\u2028');
    expect(escapeControls('tab\there, ünïcode ✓ 日本')).toBe('tab\there, ünïcode ✓ 日本');
  });

  it('human escapes the values, not the template', () => {
    expect(human`${'a\nb'}:${1}\n`).toBe('a\\nb:1\n');
  });

  it('table escapes every cell before padding', () => {
    expect(table([['\x1b', 'x'], ['ab', 'y']])).toBe('\\x1b  x\nab    y\n');
  });
});
