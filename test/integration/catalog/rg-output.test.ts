// ripgrep's output through a private file (Linux): every byte passed on in
// order, a paused reader stops the writer instead of letting the file grow,
// and what was read leaves the disk. A real child process writes, as rg would.
import { spawn, type ChildProcess } from 'node:child_process';
import { fstatSync, readdirSync, readlinkSync } from 'node:fs';
import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { rgOutput, type RgOutput } from '../../../src/catalog/grep/rg-output';
import { procStat } from '../../../src/common/process-state';

/** A stopped process's state in /proc. */
const stopped = (pid: number): boolean => procStat(pid)?.[0] === 'T';

const MB = 1 << 20;
const LIMITS = { maxUnread: MB, reclaimEvery: MB };
/** 24 MB of numbered lines, written 4 KB at a time. */
const LINES = 3 * MB;
const WRITER = `const fs = require('node:fs'); let out = ''; for (let i = 0; i < ${LINES}; i++) { out += String(i).padStart(7, '0') + '\\n'; if (out.length >= 4096) { fs.writeSync(1, out); out = ''; } } fs.writeSync(1, out);`;

function expected(): Buffer {
  let text = '';
  for (let i = 0; i < LINES; i++) text += String(i).padStart(7, '0') + '\n';
  return Buffer.from(text);
}

function startWriter(output: RgOutput): { child: ChildProcess; exited: Promise<string> } {
  const child = spawn(process.execPath, ['-e', WRITER], { stdio: ['ignore', output.stdio, 'pipe'] });
  const exited = new Promise<string>((resolve) => child.on('close', (code, signal) => resolve(signal ?? String(code))));
  return { child, exited };
}

/** Bytes of disk the output file holds (a hole holds none). */
const onDisk = (output: RgOutput): number => fstatSync(output.stdio as number).blocks * 512;

async function until(test: () => boolean): Promise<void> {
  while (!test()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe.skipIf(process.platform !== 'linux')('rg output through a private file', () => {
  it('is a file only this process holds: 0600, unlinked, its folder gone from $TMPDIR', () => {
    const before = readdirSync(os.tmpdir()).filter((name) => name.startsWith('spillway-rg-'));
    const output = rgOutput(LIMITS);
    const fd = output.stdio as number;
    expect(fstatSync(fd).mode & 0o777).toBe(0o600);
    expect(fstatSync(fd).nlink).toBe(0);
    expect(readlinkSync(`/proc/self/fd/${fd}`)).toMatch(/ \(deleted\)$/);
    expect(readdirSync(os.tmpdir()).filter((name) => name.startsWith('spillway-rg-'))).toEqual(before);
    output.release();
  });

  it('passes on every byte in order, and gives back to the disk what was read', async () => {
    const output = rgOutput(LIMITS);
    expect(typeof output.stdio).toBe('number');
    const { child, exited } = startWriter(output);
    const chunks: Buffer[] = [];
    let mostOnDisk = 0;
    output.follow(child, (chunk) => {
      chunks.push(chunk);
      mostOnDisk = Math.max(mostOnDisk, onDisk(output));
    });
    expect(await exited).toBe('0');
    await new Promise<void>((resolve) => output.whenRead(resolve));
    expect(Buffer.concat(chunks).equals(expected())).toBe(true);
    // 24 MB written; the file never held more than a few of them.
    expect(mostOnDisk).toBeLessThan(6 * MB);
  });

  it('stops the writer while the reader is paused, and lets it go on when resumed', async () => {
    const output = rgOutput(LIMITS);
    const { child, exited } = startWriter(output);
    const chunks: Buffer[] = [];
    output.follow(child, (chunk) => chunks.push(chunk));
    output.pause();
    await until(() => stopped(child.pid!));
    const unread = fstatSync(output.stdio as number).size - Buffer.concat(chunks).length;
    expect(unread).toBeGreaterThan(LIMITS.maxUnread);
    expect(unread).toBeLessThan(expected().length / 2);
    output.resume();
    expect(await exited).toBe('0');
    await new Promise<void>((resolve) => output.whenRead(resolve));
    expect(Buffer.concat(chunks).equals(expected())).toBe(true);
  });

  it('lets a writer it stopped end when released (a cancelled search)', async () => {
    const output = rgOutput(LIMITS);
    const { child, exited } = startWriter(output);
    output.follow(child, () => undefined);
    output.pause();
    await until(() => stopped(child.pid!));
    child.kill();
    // Asked while paused (nothing more will be read), then released: still told.
    const read = new Promise<void>((resolve) => output.whenRead(resolve));
    output.release();
    expect(await exited).toBe('SIGTERM');
    await read;
  });
});
