import { describe, expect, it, vi } from 'vitest';
import type { CleanPlan } from '../../../src/catalog/types';
import { coalesce, DisposableStore } from '../../../src/extension/lifecycle';
import { cleanResultMessage, confirmCleanMessage, deleteMode, grepProgressMessage, parseRetention, retentionPhrase } from '../../../src/extension/messages';

const plan: CleanPlan = {
  request: { kind: 'session', sessionKey: 's' },
  items: [
    { path: '/r/a.txt', bytes: 1024 * 1024, sessionKey: 's', mtimeMs: 0 },
    { path: '/r/b.txt', bytes: 512 * 1024, sessionKey: 's', mtimeMs: 0 },
  ],
  bytes: 1.5 * 1024 * 1024,
  refused: [{ path: '/etc/passwd', reason: 'outside the known roots' }],
};

describe('confirmations', () => {
  it('names the count and the bytes, and says where they go', () => {
    const trash = confirmCleanMessage(plan, 'of session "x"', 'trash');
    expect(trash.message).toBe('Move 2 blobs (1.5 MB) of session "x" to the trash?');
    expect(trash.action).toBe('Move to Trash');
    expect(trash.detail).toContain('/r/a.txt');
    expect(trash.detail).toContain('outside the known roots');
    const perm = confirmCleanMessage(plan, 'of session "x"', 'permanent');
    expect(perm.message).toBe('Permanently delete 2 blobs (1.5 MB) of session "x"?');
    expect(perm.detail).toContain('cannot be undone');
  });

  it('says in the one confirmation when the window has no trash', () => {
    expect(deleteMode(true, { remote: false, web: false })).toBe('trash');
    expect(deleteMode(true, { remote: true, web: false })).toBe('no-trash');
    expect(deleteMode(true, { remote: false, web: true })).toBe('no-trash');
    expect(deleteMode(true, { remote: false, web: false, trashFailed: true })).toBe('no-trash');
    expect(deleteMode(false, { remote: true, web: true })).toBe('permanent');
    const m = confirmCleanMessage(plan, 'of session "x"', 'no-trash');
    expect(m.message).toBe('Permanently delete 2 blobs (1.5 MB) of session "x"?');
    expect(m.detail.split('\n')[0]).toBe('This window (remote or web) has no trash: the files are deleted for good.');
    expect(m.action).toBe('Delete');
  });

  it('says what a retention choice deletes', () => {
    const ask = (input: string) => {
      const r = parseRetention(input);
      if ('error' in r) throw new Error(r.error);
      return confirmCleanMessage(plan, retentionPhrase(r), 'trash').message;
    };
    expect(ask('20d')).toBe('Move 2 blobs (1.5 MB) older than 20 days to the trash?');
    expect(ask('1d')).toBe('Move 2 blobs (1.5 MB) older than 1 day to the trash?');
    expect(ask('12h')).toBe('Move 2 blobs (1.5 MB) older than 12 hours to the trash?');
    expect(ask('30m')).toBe('Move 2 blobs (1.5 MB) older than 30 minutes to the trash?');
    expect(ask('90 min')).toBe('Move 2 blobs (1.5 MB) older than 90 minutes to the trash?');
    expect(ask('1GB')).toBe('Move 2 blobs (1.5 MB) older than the newest 1.0 GB to the trash?');
  });

  it('counts grep progress in words that agree', () => {
    expect(grepProgressMessage(1, 22, 1)).toBe('1/22 blobs · 1 match');
    expect(grepProgressMessage(22, 22, 0)).toBe('22/22 blobs · 0 matches');
  });

  it('reports results and failures', () => {
    expect(cleanResultMessage({ deleted: plan.items, bytes: plan.bytes, failed: [], manifestsRewritten: [] }, false)).toBe('Deleted 2 blobs (1.5 MB).');
    expect(cleanResultMessage({ deleted: [], bytes: 0, failed: [{ path: '/r/a', reason: 'EACCES' }], manifestsRewritten: [] }, true)).toContain('1 could not be deleted: EACCES');
  });
});

describe('retention input', () => {
  it('parses ages and sizes', () => {
    expect(parseRetention('7d')).toEqual({ olderThanMs: 7 * 86_400_000 });
    expect(parseRetention('12 hours')).toEqual({ olderThanMs: 12 * 3_600_000 });
    expect(parseRetention('2GB')).toEqual({ maxTotalBytes: 2 * 1024 ** 3 });
    expect(parseRetention('30m')).toEqual({ olderThanMs: 30 * 60_000 });
    expect(parseRetention('2 MB')).toEqual({ maxTotalBytes: 2 * 1024 ** 2 });
    expect(parseRetention('soon')).toHaveProperty('error');
    expect(parseRetention('0d')).toHaveProperty('error');
  });
});

describe('lifecycle', () => {
  it('disposes in reverse order, once, and disposes late additions at once', () => {
    const order: string[] = [];
    const store = new DisposableStore();
    store.add({ dispose: () => order.push('first') });
    store.add({ dispose: () => order.push('second') });
    store.dispose();
    store.dispose();
    expect(order).toEqual(['second', 'first']);
    store.add({ dispose: () => order.push('late') });
    expect(order).toEqual(['second', 'first', 'late']);
  });

  it('keeps disposing after one throws, then reports it', () => {
    const order: string[] = [];
    const store = new DisposableStore();
    store.add({ dispose: () => order.push('a') });
    store.add({ dispose: () => { throw new Error('boom'); } });
    expect(() => store.dispose()).toThrow(/failed to dispose/);
    expect(order).toEqual(['a']);
  });

  it('coalesces a burst into one call', () => {
    vi.useFakeTimers();
    try {
      let calls = 0;
      const c = coalesce(() => calls++, 5);
      for (let i = 0; i < 50; i++) c.schedule();
      vi.advanceTimersByTime(10);
      expect(calls).toBe(1);
      c.schedule();
      c.dispose();
      vi.advanceTimersByTime(10);
      expect(calls).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
