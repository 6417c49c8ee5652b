// A new agent source is its module plus one line in sources/names.ts; the compiler checks sources/index.ts keys a
// Source by each name. What it cannot check is here: each source registered once, and the extension's
// `spillway.sources` setting (package.json) offering the same names.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOURCES } from '../../../src/catalog/sources/index';
import { SOURCE_NAMES } from '../../../src/catalog/types';

interface Contributes {
  contributes: { configuration: { properties?: Record<string, { properties?: Record<string, unknown> }> } | Array<{ properties?: Record<string, { properties?: Record<string, unknown> }> }> };
}

function settingKeys(): string[] {
  const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as Contributes;
  const sections = [pkg.contributes.configuration].flat();
  const setting = sections.map((s) => s.properties?.['spillway.sources']).find(Boolean);
  return Object.keys(setting?.properties ?? {});
}

describe('the source registry', () => {
  it('holds each source once, by the names the types list', () => {
    const registered = SOURCES.map((s) => s.name);
    expect(new Set(registered).size).toBe(registered.length);
    expect([...registered].sort()).toEqual([...SOURCE_NAMES].sort());
  });

  it("is what the extension's spillway.sources setting offers", () => {
    expect(settingKeys().sort()).toEqual(SOURCES.map((s) => s.name).sort());
  });
});
