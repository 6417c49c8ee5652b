// The store is chosen in one place from configuration (SPILLWAY_STORE); what it opens really saves.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalSpillStore } from '../../../src/spill/local-store';
import { openSpillStore, storeKind } from '../../../src/spill/open-store';
import type { SpillStore } from '../../../src/spill/types';

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await fsp.rm(dir, { recursive: true, force: true });
});

async function saveOne(store: SpillStore): Promise<string> {
  const ref = await store.saveText({ owner: { sessionId: 's1' }, source: { toolName: 'bash', callId: 'c1', label: 'ls' }, suggestedName: 'out.txt', content: 'hello\n' });
  return fsp.readFile(ref.locator, 'utf8');
}

describe('openSpillStore', () => {
  it('opens the local store by default, and it saves under the root given', async () => {
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'open-store-'));
    made.push(root);
    const store = openSpillStore({ root, env: {} });
    expect(store).toBeInstanceOf(LocalSpillStore);
    expect(store.root).toBe(root);
    expect(await saveOne(store)).toBe('hello\n');
  });

  it('says so when SPILLWAY_STORE names no store kind, and still saves locally', async () => {
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'open-store-'));
    made.push(root);
    const warnings: string[] = [];
    const logger = { warn: (m: string) => void warnings.push(m) };
    expect(storeKind({ env: { SPILLWAY_STORE: 'nfs' }, logger })).toBe('local');
    expect(warnings.join('\n')).toMatch(/SPILLWAY_STORE=nfs is not a store kind/);
    const store = openSpillStore({ root, env: { SPILLWAY_STORE: 'nfs' }, logger });
    expect(await saveOne(store)).toBe('hello\n');
    expect(storeKind({ env: { SPILLWAY_STORE: 'local' }, logger: { warn: () => expect.fail('no warning for a known kind') } })).toBe('local');
  });
});
