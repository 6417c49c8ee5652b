// A scanned Catalog over a fresh fixture home for one test file: built before
// its tests, disposed and removed after them.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';
import { buildFixtureHome, type FixtureHome } from '../../fixtures/build-home';

export interface FixtureCatalog {
  dir: string;
  fx: FixtureHome;
  catalog: Catalog;
}

export function useFixtureCatalog(prefix: string): FixtureCatalog {
  const ctx = {} as FixtureCatalog;
  beforeAll(async () => {
    ctx.dir = await fsp.mkdtemp(path.join(os.tmpdir(), prefix));
    ctx.fx = await buildFixtureHome(ctx.dir);
    ctx.catalog = new Catalog({ env: ctx.fx.env, roots: ctx.fx.userRoots });
    await ctx.catalog.scan();
  });
  afterAll(async () => {
    await ctx.catalog?.dispose();
    if (ctx.dir) await fsp.rm(ctx.dir, { recursive: true, force: true });
  });
  return ctx;
}
