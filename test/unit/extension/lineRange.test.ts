import { describe, expect, it } from 'vitest';
import { parseLineRange, validateLineRange } from '../../../src/extension/lineRange';

describe('parseLineRange', () => {
  it('accepts START-END and its spellings', () => {
    for (const text of ['120-180', ' 120 - 180 ', '120:180', '120..180', '120–180']) {
      expect(parseLineRange(text)).toEqual({ ok: true, range: { start: 120, end: 180 } });
    }
  });

  it('accepts a single line and START,+COUNT', () => {
    expect(parseLineRange('42')).toEqual({ ok: true, range: { start: 42, end: 42 } });
    expect(parseLineRange('10,+5')).toEqual({ ok: true, range: { start: 10, end: 14 } });
  });

  it('rejects empty, garbage, zero, and reversed ranges with a message', () => {
    for (const text of ['', 'abc', '12-', '-5', '1-2-3', '0-10', '180-120', '1.5-3']) {
      const r = parseLineRange(text);
      expect(r.ok, text).toBe(false);
      if (!r.ok) expect(r.message.length).toBeGreaterThan(5);
    }
    const reversed = parseLineRange('180-120');
    expect(!reversed.ok && reversed.message).toContain('before it starts');
  });

  it('refuses a range reaching past the file, saying how far it goes, and a start past it', () => {
    const over = parseLineRange('90-500', 100);
    expect(over.ok).toBe(false);
    expect(!over.ok && over.message).toContain('100 lines');
    expect(!over.ok && over.message).toContain('Try 90-100');
    expect(parseLineRange('90-100', 100)).toEqual({ ok: true, range: { start: 90, end: 100 } });
    const past = parseLineRange('101-120', 100);
    expect(past.ok).toBe(false);
    expect(!past.ok && past.message).toContain('100 lines');
  });

  it('validateLineRange returns undefined only for valid input', () => {
    expect(validateLineRange('1-2')).toBeUndefined();
    expect(validateLineRange('x')).toMatch(/not a line range/);
  });
});
