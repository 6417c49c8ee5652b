import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { procStat } from '../../../src/common/process-state';
// @ts-expect-error: a plain .mjs set-up script without typings
import { runStep } from '../../../scripts/install-step.mjs';

const installStep = path.resolve(__dirname, '../../../scripts/install-step.mjs');

// A stand-in installer: attempt 1 leaves a file in the install folder, starts a child of
// its own that never ends, and hangs; a later attempt succeeds only if that file is gone.
const installer = `
const fs = require('node:fs'), path = require('node:path'), { spawn } = require('node:child_process');
const [dir, marker, pidFile, mode] = process.argv.slice(1);
if (mode === 'hang' || !fs.existsSync(marker)) {
  fs.writeFileSync(marker, '');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'half-written'), '');
  fs.writeFileSync(pidFile, String(spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }).pid));
  setInterval(() => {}, 1000);
} else {
  process.exit(fs.existsSync(path.join(dir, 'half-written')) ? 3 : 0);
}`;

/** Whether `pid` still runs: a zombie waiting for init to reap it has ended. */
function running(pid: number): boolean {
  return !'ZX'.includes(procStat(pid)?.[0] ?? 'X');
}

describe('runStep', () => {
  let work: string;
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  function paths() {
    work = mkdtempSync(path.join(tmpdir(), 'install-step-'));
    return { dir: path.join(work, 'prefix'), marker: path.join(work, 'tried'), pidFile: path.join(work, 'child.pid') };
  }

  it('stops a hung installer with its children, empties its folder and tries again', async () => {
    const { dir, marker, pidFile } = paths();
    await runStep('test-hung-step', 'a hung step', process.execPath, ['-e', installer, dir, marker, pidFile, 'once'], {
      limitSeconds: 1, attempts: 2, freshDir: dir,
    });
    const child = Number(readFileSync(pidFile, 'utf8'));
    await expect.poll(() => running(child), { timeout: 10_000 }).toBe(false);
  });

  it('gives up after its last attempt and says why', async () => {
    const { dir, marker, pidFile } = paths();
    await expect(runStep('test-hung-step', 'a hung step', process.execPath, ['-e', installer, dir, marker, pidFile, 'hang'], {
      limitSeconds: 1, attempts: 2, freshDir: dir,
    })).rejects.toThrow(/a hung step failed \(no end after 1 s, stopped\)/);
  });

  it('passes a Ctrl+C on to the installer, which runs apart from the terminal, and ends', async () => {
    const { dir, marker, pidFile } = paths();
    const script = `import { runStep } from ${JSON.stringify(installStep)};
await runStep('test-hung-step', 'a hung step', process.execPath, ['-e', ${JSON.stringify(installer)}, ...${JSON.stringify([dir, marker, pidFile, 'hang'])}]);`;
    const setup = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    const ended = new Promise<NodeJS.Signals | null>((resolve) => setup.on('exit', (_code, signal) => resolve(signal)));
    await expect.poll(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', { timeout: 10_000 }).toBe(true);
    setup.kill('SIGINT');
    expect(await ended).toBe('SIGINT');
    await expect.poll(() => running(Number(readFileSync(pidFile, 'utf8'))), { timeout: 10_000 }).toBe(false);
  });

  it('a failing installer is reported with the tail of its log', async () => {
    const { dir } = paths();
    await expect(runStep('test-failing-step', 'a failing step', process.execPath, ['-e', 'console.log("boom"); process.exit(4)'], {
      attempts: 1, freshDir: dir,
    })).rejects.toThrow(/exited with 4[\s\S]*boom/);
  });
});
