// The store is chosen in one place from configuration (SPILLWAY_STORE); what it opens really saves.
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalSpillStore } from '../../../src/spill/local-store';
import { isMirrored, openSpillStore, storeKind } from '../../../src/spill/open-store';
import { findCli } from '../../../src/spill/remote/configured';
import { pendingNames, readPending } from '../../../src/spill/remote/upload-queue';
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

describe('openSpillStore with a bucket', () => {
  it('SPILLWAY_STORE=s3://… keeps the local blob, queues its copy and names it in the hint', async () => {
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'open-store-'));
    made.push(root);
    const queue = path.join(root, 'uploads');
    const store = openSpillStore({ root, agent: 'pi', env: { SPILLWAY_STORE: 's3://team-spills/ci', SPILLWAY_UPLOAD_QUEUE: queue } });
    expect(isMirrored(store)).toBe(true);
    const ref = await store.saveText({ owner: { sessionId: 's1' }, source: { toolName: 'bash', callId: 'c1', label: 'ls' }, suggestedName: 'out.txt', content: 'hello\n' });
    expect(await fsp.readFile(ref.locator, 'utf8')).toBe('hello\n');
    expect(ref.retrievalHint).toContain(`spillway show s3://team-spills/ci/pi/s1/${ref.sha256}.txt --lines A:B`);
    const names = await pendingNames(queue);
    expect(names).toHaveLength(1);
    expect(await readPending(queue, names[0]!)).toMatchObject({ store: 's3://team-spills/ci/', file: ref.locator, agent: 'pi', sessionId: 's1', sha256: ref.sha256 });
    expect((await fsp.stat(queue)).mode & 0o777).toBe(0o700);
  });

  it('a file the agent wrote itself, once recorded, is queued too', async () => {
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'open-store-'));
    made.push(root);
    const queue = path.join(root, 'uploads');
    const store = openSpillStore({ root, layout: { dirFor: () => path.join(root, 'spills') }, agent: 'claude-code', env: { SPILLWAY_STORE: 's3://team-spills', SPILLWAY_UPLOAD_QUEUE: queue } });
    const file = await store.createEmpty({ sessionId: 's2' }, 'capture.txt');
    await fsp.writeFile(file, 'a\nb\n');
    const ref = await store.recordExternal({ owner: { sessionId: 's2' }, source: { toolName: 'Bash', callId: 'c2', label: 'make' }, file: 'capture.txt' });
    expect(ref.retrievalHint).toContain(`s3://team-spills/claude-code/s2/${ref.sha256}.txt`);
    expect(await pendingNames(queue)).toHaveLength(1);
  });

  it('a location in the environment that is not valid: said so, spilled locally; an explicit one throws', async () => {
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'open-store-'));
    made.push(root);
    const warnings: string[] = [];
    const store = openSpillStore({ root, env: { SPILLWAY_STORE: 's3://B_ad' }, logger: { warn: (m) => void warnings.push(m) } });
    expect(isMirrored(store)).toBe(false);
    expect(warnings.join('\n')).toMatch(/SPILLWAY_STORE: .*not a valid bucket name; spilling locally only/);
    expect(() => openSpillStore({ root, env: {}, store: '/tmp/x' })).toThrow(/--store must be an s3:/);
  });

  it('the CLI that uploads is found from the sources as from a bundle', () => {
    const repo = path.resolve(__dirname, '../../..');
    const cli = findCli({}, path.join(repo, 'src', 'spill', 'remote'));
    if (existsSync(path.join(repo, 'dist', 'cli-upload.js'))) expect(cli).toBe(path.join(repo, 'dist', 'cli.js'));
    expect(findCli({}, os.tmpdir())).toBeUndefined();
  });
});
