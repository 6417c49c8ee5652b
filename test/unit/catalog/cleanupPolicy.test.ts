import { execFileSync } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupPolicyPath, parseCleanupPolicy, planPolicyClean, readCleanupPolicy, RECENT_SESSION_MS, writeCleanupPolicy } from '../../../src/catalog/clean/cleanupPolicy';
import { policyLimits } from '../../../src/extension/messages';
import { useFixtureCatalog } from './fixture-catalog';

const ctx = useFixtureCatalog('policy-unit-');
const DAY = 86_400_000;

describe('cleanup policy file', () => {
  it('lives under XDG_CONFIG_HOME, is written 0600 in a 0700 folder, and reads back', async () => {
    const env = { HOME: ctx.dir, XDG_CONFIG_HOME: path.join(ctx.dir, 'cfg') };
    expect(cleanupPolicyPath(env)).toBe(path.join(ctx.dir, 'cfg', 'spillway', 'cleanup.json'));
    expect(cleanupPolicyPath({ HOME: ctx.dir })).toBe(path.join(ctx.dir, '.config', 'spillway', 'cleanup.json'));
    expect(await readCleanupPolicy(env)).toBeUndefined();
    const file = await writeCleanupPolicy({ maxAgeDays: 30, pinned: ['/a/b.txt', '/a/b.txt'] }, env);
    expect((await fsp.stat(file)).mode & 0o777).toBe(0o600);
    expect((await fsp.stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await readCleanupPolicy(env)).toEqual({ maxAgeDays: 30, pinned: ['/a/b.txt'] });
  });

  it('refuses a FIFO in place of the policy file at once, instead of waiting for a writer', async () => {
    const env = { HOME: ctx.dir, XDG_CONFIG_HOME: path.join(ctx.dir, 'cfg-fifo') };
    await fsp.mkdir(path.dirname(cleanupPolicyPath(env)), { recursive: true });
    execFileSync('mkfifo', [cleanupPolicyPath(env)]);
    await expect(readCleanupPolicy(env)).rejects.toThrow(/not a regular file \(FIFO\)/);
  });

  it('rejects a malformed policy with a clear error', () => {
    expect(() => parseCleanupPolicy('{', 'p')).toThrow(/p: not JSON/);
    expect(() => parseCleanupPolicy('{"maxAgeDays": -1}', 'p')).toThrow('p: maxAgeDays must be a number above 0');
    expect(() => parseCleanupPolicy('{"pinned": ["rel/x"]}', 'p')).toThrow('pinned must be a list of absolute paths');
    expect(() => parseCleanupPolicy('[]', 'p')).toThrow('expected an object');
  });

  it('turns the settings into limits', () => {
    expect(policyLimits('30d', '5GB')).toEqual({ maxAgeDays: 30, maxTotalBytes: 5 * 1024 ** 3 });
    expect(policyLimits('12h', '')).toEqual({ maxAgeDays: 0.5 });
    expect(policyLimits('', '')).toEqual({});
    expect(policyLimits('5GB', '')).toHaveProperty('error');
    expect(policyLimits('', '30d')).toHaveProperty('error');
  });
});

describe('what the policy deletes', () => {
  it('never a session changed in the last hour, never a pinned blob', async () => {
    const all = ctx.catalog.sessions().flatMap((s) => s.blobs);
    const newest = Math.max(...all.map((b) => b.mtimeMs));
    // A day after the newest change, "older than 1 hour" would take everything...
    const later = newest + DAY;
    const pinned = all[0]!.path;
    const plan = await planPolicyClean(ctx.catalog, { maxAgeDays: 1 / 24, pinned: [pinned] }, later);
    expect(plan.items.map((i) => i.path)).not.toContain(pinned);
    expect(plan.kept.pinned).toBe(1);
    expect(plan.items.length + plan.kept.pinned + plan.kept.recent).toBeGreaterThan(1);
    // ...but a session written to within the hour before "now" keeps all its blobs.
    const justNow = newest + RECENT_SESSION_MS / 2;
    const soon = await planPolicyClean(ctx.catalog, { maxAgeDays: 1 / 48, pinned: [] }, justNow);
    const fresh = ctx.catalog.sessions().filter((s) => s.blobs.some((b) => justNow - b.mtimeMs < RECENT_SESSION_MS));
    expect(fresh.length).toBeGreaterThan(0);
    for (const s of fresh) for (const b of s.blobs) expect(soon.items.map((i) => i.path)).not.toContain(b.path);
    expect(soon.bytes).toBe(soon.items.reduce((n, i) => n + i.bytes, 0));
    // No limit: nothing.
    expect((await planPolicyClean(ctx.catalog, { pinned: [] }, later)).items).toEqual([]);
  });

  it("counts a manifest written to as the session's change (a reused old blob, handed to the model just now)", async () => {
    const engine = ctx.catalog.sessions().find((s) => s.blobs.some((b) => existsSync(path.join(path.dirname(b.path), 'spillway.jsonl'))))!;
    const blob = engine.blobs[0]!;
    const manifest = path.join(path.dirname(blob.path), 'spillway.jsonl');
    const now = Math.max(...engine.blobs.map((b) => b.mtimeMs)) + 10 * DAY;
    const before = await planPolicyClean(ctx.catalog, { maxAgeDays: 1, pinned: [] }, now);
    expect(before.items.map((i) => i.path)).toContain(blob.path);
    // The engine's dedup appends a record for the old blob: only the manifest changes.
    const written = new Date(now - 60_000);
    await fsp.utimes(manifest, written, written);
    const after = await planPolicyClean(ctx.catalog, { maxAgeDays: 1, pinned: [] }, now);
    expect(after.items.map((i) => i.path)).not.toContain(blob.path);
    expect(after.kept.recent).toBeGreaterThan(0);
  });
});
