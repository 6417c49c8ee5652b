// ripgrep gets each blob folder as a descriptor held open here (Linux), many
// folders per rg process. Under a low open-file limit grep must still search
// every folder: it gives rg fewer at a time, never fails for want of descriptors.
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRipgrep } from '../../../src/catalog/grep/grep';
import { CLI, ensureBuilt, REPO } from './helpers';

const SESSIONS = 600;
let dir: string;
let root: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'grep-fd-limit-'));
  root = path.join(dir, 'spills');
  for (let s = 0; s < SESSIONS; s++) {
    const folder = path.join(root, `session-${String(s).padStart(4, '0')}`);
    await fsp.mkdir(folder, { recursive: true });
    await fsp.writeFile(path.join(folder, 'blob.txt'), `first line\nneedle in session ${s}\n`);
    const record = { v: 1, file: 'blob.txt', sessionId: `s${s}`, tool: 'Bash', toolCallId: `c${s}`, args: 'x', bytes: 40, createdAt: '2026-01-01T00:00:00.000Z' };
    await fsp.writeFile(path.join(folder, 'spillway.jsonl'), JSON.stringify(record) + '\n');
  }
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

describe.skipIf(process.platform !== 'linux' || !findRipgrep())('grep under a low open-file limit', () => {
  it(`finds the needle in all ${SESSIONS} session folders with 200 descriptors allowed, cold and warm`, () => {
    const env = { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache') };
    for (const pass of ['cold', 'warm']) {
      const args = ['grep', 'needle', '--engine', 'rg', '--json', '--max', '100000', '--no-default-roots', '--root', root];
      const r = spawnSync('bash', ['-c', 'ulimit -n 200 && exec "$@"', 'bash', process.execPath, CLI, ...args], { env, encoding: 'utf8', maxBuffer: 1 << 26 });
      expect(r.status, `${pass}: ${r.stderr}`).toBe(0);
      expect(r.stderr, pass).toBe('');
      const out = JSON.parse(r.stdout) as { matches: Array<{ path: string }> };
      expect(new Set(out.matches.map((m) => path.basename(path.dirname(m.path)))).size, pass).toBe(SESSIONS);
    }
  });

  it('lets go of every descriptor, the batch opened ahead too, when a search is capped or cancelled', () => {
    // In a process of its own under the low limit (batches of 32 folders, the next one opened while rg searches):
    // the library as the extension host runs it, where a descriptor left open stays for the window's life.
    const script = `
      const { readdirSync } = require('node:fs');
      const { Catalog } = require(${JSON.stringify(path.join(REPO, 'dist', 'index.js'))});
      (async () => {
        const catalog = new Catalog({ env: { ...process.env, HOME: ${JSON.stringify(path.join(dir, 'home'))} }, roots: [${JSON.stringify(root)}], useDefaultRoots: false });
        await catalog.scan();
        const open = () => readdirSync('/proc/self/fd').length;
        // One whole search first: the first child process leaves the loop's own descriptors (its signal pipe) for good.
        const whole = await catalog.grep({ pattern: 'needle', engine: 'rg', maxResults: 100000 }, () => undefined);
        const before = open();
        const capped = await catalog.grep({ pattern: 'needle', engine: 'rg', maxResults: 40 }, () => undefined);
        const afterCap = open();
        const stop = new AbortController();
        let seen = 0;
        const cancelled = await catalog.grep({ pattern: 'needle', engine: 'rg', maxResults: 100000 }, () => { if (++seen === 50) stop.abort(); }, stop.signal);
        const afterCancel = open();
        await catalog.dispose();
        console.log(JSON.stringify({ before, afterCap, afterCancel, capped: capped.truncated, cancelled: cancelled.cancelled, matched: whole.matches }));
      })().catch((err) => { console.error(err); process.exit(1); });`;
    const r = spawnSync('bash', ['-c', 'ulimit -n 200 && exec "$@"', 'bash', process.execPath, '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { before: number; afterCap: number; afterCancel: number; capped: boolean; cancelled: boolean; matched: number };
    expect(result).toEqual({ before: result.before, afterCap: result.before, afterCancel: result.before, capped: true, cancelled: true, matched: SESSIONS });
  });

  it('fails with the error of an rg that fails, starts no rg after it and lets go of every descriptor', async () => {
    // Batches of 32 folders under the limit, the next opened while rg searches one: the first rg fails.
    const log = path.join(dir, 'rg-runs.log');
    const wrapper = path.join(dir, 'failing-rg.sh');
    await fsp.rm(log, { force: true });
    await fsp.writeFile(wrapper, `#!/bin/sh\necho run >> '${log}'\nif [ "$(wc -l < '${log}')" -eq 1 ]; then echo 'broken pipe dream' >&2; exit 2; fi\nexec '${findRipgrep()}' "$@"\n`, { mode: 0o755 });
    const script = `
      const { readdirSync } = require('node:fs');
      const { Catalog } = require(${JSON.stringify(path.join(REPO, 'dist', 'index.js'))});
      (async () => {
        const catalog = new Catalog({ env: { ...process.env, HOME: ${JSON.stringify(path.join(dir, 'home'))} }, roots: [${JSON.stringify(root)}], useDefaultRoots: false });
        await catalog.scan();
        const open = () => readdirSync('/proc/self/fd').length;
        await catalog.grep({ pattern: 'needle', engine: 'rg', maxResults: 10 }, () => undefined);
        const before = open();
        const error = await catalog.grep({ pattern: 'needle', engine: 'rg', rgPath: ${JSON.stringify(wrapper)}, maxResults: 100000 }, () => undefined).then(() => 'none', (err) => err.message);
        const after = open();
        await catalog.dispose();
        console.log(JSON.stringify({ before, after, error }));
      })().catch((err) => { console.error(err); process.exit(1); });`;
    const r = spawnSync('bash', ['-c', 'ulimit -n 200 && exec "$@"', 'bash', process.execPath, '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { before: number; after: number; error: string };
    expect(result).toEqual({ before: result.before, after: result.before, error: 'ripgrep: broken pipe dream' });
    // Of some 19 batches, none was searched after the first failed.
    expect((await fsp.readFile(log, 'utf8')).split('\n').filter(Boolean)).toEqual(['run']);
  });
});
