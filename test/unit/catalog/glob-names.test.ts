// globNames: the file names an rg glob whose only wildcard is `*` lets rg read
// (a TMPDIR folder is handed to rg whole only while every file so named is a blob).
import { describe, expect, it } from 'vitest';
import { globNames } from '../../../src/catalog/sources/common';
import { GOOSE_FILE } from '../../../src/catalog/sources/goose';

describe('globNames', () => {
  it("matches what the glob matches, and every name of goose's and Cline's", () => {
    const goose = globNames('mcp_response_*.txt');
    for (const name of ['mcp_response_20260101_000000.txt', 'mcp_response_20260101_000000.123456.txt']) {
      expect(GOOSE_FILE.test(name), name).toBe(true);
      expect(goose.test(name), name).toBe(true);
    }
    expect(goose.test('mcp_response_.txt')).toBe(true); // rg's * matches nothing too
    expect(goose.test('notes.txt')).toBe(false);
    expect(goose.test('mcp_response_1.txt.bak')).toBe(false);
    expect(globNames('large-output-*.log').test('large-output-1767225609960.log')).toBe(true);
  });

  it('takes every other character literally', () => {
    const re = globNames('a.b+(c)*');
    expect(re.test('a.b+(c)')).toBe(true);
    expect(re.test('a.b+(c)\nx')).toBe(true);
    expect(re.test('axb+(c)')).toBe(false);
    expect(re.test('a.bb(c)')).toBe(false);
  });
});
