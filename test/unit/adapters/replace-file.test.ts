import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replaceFile } from '../../../src/adapters/replace-file';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-replace-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe('replaceFile', () => {
  it('writes the text byte for byte: a BOM, CRLF, a NUL and bytes that are not UTF-8 come back as given', async () => {
    const file = path.join(dir, 'config.toml');
    fs.writeFileSync(file, 'old\n');
    const bytes = Buffer.concat([Buffer.from('\ufeffa = 1\r\nb = "é"\r\n', 'utf8'), Buffer.from([0x00, 0xff, 0xfe, 0x0a])]);
    await replaceFile(file, bytes);
    expect(fs.readFileSync(file).equals(bytes)).toBe(true);
    await replaceFile(file, 'x = "ü"\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('x = "ü"\n');
    expect(fs.readdirSync(dir)).toEqual(['config.toml']);
  });

  it('keeps the mode the user gave the file, wider or narrower than 0600', async () => {
    const file = path.join(dir, 'settings.json');
    for (const wanted of [0o644, 0o400, 0o640]) {
      fs.writeFileSync(file, '{}');
      fs.chmodSync(file, wanted);
      await replaceFile(file, '{"a":1}\n');
      expect(mode(file)).toBe(wanted);
      expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1}\n');
      fs.chmodSync(file, 0o600);
    }
  });

  it('creates a missing file 0600 in folders it makes 0700', async () => {
    const file = path.join(dir, 'new', 'deeper', 'settings.json');
    await replaceFile(file, '{}\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('{}\n');
    expect(mode(file)).toBe(0o600);
    expect(mode(path.join(dir, 'new'))).toBe(0o700);
    expect(mode(path.join(dir, 'new', 'deeper'))).toBe(0o700);
  });

  it('replaces the target of a symlinked config, which stays a symlink with its target keeping its mode', async () => {
    const real = path.join(dir, 'dotfiles', 'settings.json');
    fs.mkdirSync(path.dirname(real));
    fs.writeFileSync(real, '{}', { mode: 0o644 });
    fs.chmodSync(real, 0o644);
    const link = path.join(dir, 'settings.json');
    fs.symlinkSync(real, link);
    await replaceFile(link, '{"b":2}\n');
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toBe('{"b":2}\n');
    expect(mode(real)).toBe(0o644);
    expect(fs.readdirSync(dir).sort()).toEqual(['dotfiles', 'settings.json']);
    expect(fs.readdirSync(path.dirname(real))).toEqual(['settings.json']);
  });

  it('refuses a symlink that leads nowhere, and writes nothing where it points', async () => {
    const link = path.join(dir, 'settings.json');
    const nowhere = path.join(dir, 'elsewhere', 'private.json');
    fs.symlinkSync(nowhere, link);
    await expect(replaceFile(link, '{}')).rejects.toMatchObject({ code: 'ENOTREG' });
    expect(fs.existsSync(path.dirname(nowhere))).toBe(false);
    expect(fs.readdirSync(dir)).toEqual(['settings.json']);
  });

  it('refuses a FIFO or a folder in the config file\'s place, without blocking and without a temp file left', async () => {
    const fifo = path.join(dir, 'settings.json');
    execFileSync('mkfifo', [fifo]);
    await expect(replaceFile(fifo, '{}')).rejects.toMatchObject({ code: 'ENOTREG' });
    const folder = path.join(dir, 'config.toml');
    fs.mkdirSync(folder);
    await expect(replaceFile(folder, '{}')).rejects.toMatchObject({ code: 'ENOTREG' });
    expect(fs.readdirSync(dir).sort()).toEqual(['config.toml', 'settings.json']);
  });

});
