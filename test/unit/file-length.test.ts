// No source file over 500 lines: a file that long holds several jobs, and is split into modules instead.
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(__dirname, '../../src');
const MAX_LINES = 500;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.(ts|tsx|mts|cts)$/.test(e.name) ? [p] : [];
  });
}

describe('source files', () => {
  it(`are ${MAX_LINES} lines or fewer`, () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    const long = files.map((f) => ({ file: path.relative(SRC, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 })).filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
