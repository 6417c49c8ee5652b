import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listedAsChecked, sessionJson } from '../../../src/catalog/index/session-json';

const folder = path.join('/home/u/.claude/projects/-work', 'session "one"', 'tool-results');
const blob = (name: string) => ({ path: path.join(folder, name), name, tool: 'Bash', toolCallId: 'toolu_1', args: 'make', bytes: 10, createdAt: '2026-01-01T00:00:00.000Z', turn: 1, kind: 'tool-result' as const });
const session = { key: 'claude-code:/home/u/s', source: 'claude-code' as const, id: 's', title: 'naïve', cwd: undefined, dir: '/home/u/s', bytes: 20 };
const checked = { key: session.key, dir: session.dir, bytes: 20, blobs: 2, folders: [folder] };

describe('listedAsChecked', () => {
  it('takes a kept listing that is the session the scan checked', () => {
    expect(listedAsChecked(sessionJson(session, [blob('toolu_1.txt'), blob('ü.txt')]), checked)).toBe(true);
  });

  it('refuses one that names another key, folder, size or count, or a blob outside the checked folders', () => {
    const kept = () => sessionJson(session, [blob('toolu_1.txt'), blob('toolu_2.txt')]);
    expect(listedAsChecked(kept(), { ...checked, key: 'claude-code:/other' })).toBe(false);
    expect(listedAsChecked(kept(), { ...checked, dir: '/elsewhere' })).toBe(false);
    expect(listedAsChecked(kept(), { ...checked, bytes: 21 })).toBe(false);
    expect(listedAsChecked(kept(), { ...checked, blobs: 3 })).toBe(false);
    expect(listedAsChecked(kept(), { ...checked, folders: undefined })).toBe(false);
    expect(listedAsChecked(kept(), { ...checked, folders: [path.dirname(folder)] })).toBe(false);
    const swapped = (to: string) => {
      const k = kept();
      k.blobs[1] = k.blobs[1]!.replace(JSON.stringify(path.join(folder, 'toolu_2.txt')), to);
      return listedAsChecked(k, checked);
    };
    expect(swapped(JSON.stringify('/etc/passwd'))).toBe(false);
    expect(swapped(JSON.stringify(path.join(folder, '..', 'x')))).toBe(false);
    expect(swapped(JSON.stringify(folder + '/').slice(0, -1) + '..\\u002f..\\u002fx"')).toBe(false);
    expect(swapped(JSON.stringify(path.join(folder, '..')))).toBe(false);
    expect(swapped(JSON.stringify(path.join(folder, 'toolu_3.txt')))).toBe(true); // another entry of the checked folder
  });
});
