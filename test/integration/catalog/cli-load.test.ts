// The built CLI loads the command it runs and nothing of the others: each is a
// file of its own (esbuild.mjs), and what only ripgrep needs (child_process,
// with net and dgram) waits until rg runs, what only a worker thread needs
// until one starts, and crypto until a manifest is rewritten. Nor does listing
// load fs/promises or perf_hooks (with the streams and readline they bring):
// its few one-off calls are synchronous. Seen from inside the real process.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt } from './helpers';
import { REAL_CLAUDE_FIXTURES } from '../../fixtures/build-home';

let dir: string;
beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(path.join(os.tmpdir(), 'spillway-cli-load-'));
  // Preloaded into the CLI's process: on exit, what it had loaded.
  writeFileSync(
    path.join(dir, 'loaded.js'),
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.LOADED_OUT, JSON.stringify({ files: Object.keys(require.cache), builtins: process.moduleLoadList })));\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function loadedBy(args: string[], extraEnv: NodeJS.ProcessEnv = {}): { files: string[]; builtins: string[]; status: number | null; stdout: string } {
  const out = path.join(dir, 'out.json');
  const home = mkdtempSync(path.join(dir, 'home-'));
  const env = { PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), LOADED_OUT: out, ...extraEnv };
  const run = spawnSync(process.execPath, ['--require', path.join(dir, 'loaded.js'), CLI, ...args], { env, encoding: 'utf8' });
  const { files, builtins } = JSON.parse(readFileSync(out, 'utf8')) as { files: string[]; builtins: string[] };
  const dist = path.dirname(CLI);
  return { files: files.filter((f) => path.dirname(f) === dist).map((f) => path.basename(f)).sort(), builtins, status: run.status, stdout: run.stdout };
}

describe('the built CLI', () => {
  it('`list` loads its own file only, and not child_process, worker_threads, crypto, fs/promises or perf_hooks', () => {
    // The real sessions, listed twice: the first run walks, describes and writes the index, the second reads it.
    const home = mkdtempSync(path.join(dir, 'home-list-'));
    const env = { CLAUDE_CONFIG_DIR: path.join(REAL_CLAUDE_FIXTURES, 'run1'), HOME: home, XDG_CACHE_HOME: path.join(home, '.cache') };
    for (const pass of ['cold', 'warm']) {
      const run = loadedBy(['list', '--json'], env);
      expect(run.status, pass).toBe(0);
      expect((JSON.parse(run.stdout) as { sessions: unknown[] }).sessions.length, pass).toBeGreaterThan(0);
      expect(run.files).toEqual(['cli-list.js', 'cli.js']);
      for (const builtin of ['child_process', 'worker_threads', 'crypto', 'internal/fs/promises', 'perf_hooks']) expect(run.builtins, pass).not.toContain(`NativeModule ${builtin}`);
    }
  });

  it('`spill` loads the spill engine without the catalog', () => {
    const run = loadedBy(['spill', '--help']);
    expect(run.status).toBe(0);
    expect(run.files).toEqual(['cli-spill.js', 'cli.js']);
  });

  it('`--help` loads no command, and not child_process', () => {
    const run = loadedBy(['--help']);
    expect(run.status).toBe(0);
    expect(run.files).toEqual(['cli.js']);
    expect(run.builtins).not.toContain('NativeModule child_process');
  });
});
