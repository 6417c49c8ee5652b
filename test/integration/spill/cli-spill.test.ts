// `spillway spill` as a real child process: the built artifact (dist/cli.js).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../unit/spill/temp-dirs';

const repo = path.resolve(__dirname, '../../..');
const cli = path.join(repo, 'dist', 'cli.js');
const tmp = () => tempDir('spillway-cli-');
const big = Array.from({ length: 4000 }, (_, i) => (i === 2000 ? 'FAIL src/deep.test.ts > adds' : `ok ${i} ${'.'.repeat(i % 30)}`)).join('\n') + '\n';

function spill(args: string[], input: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [cli, 'spill', ...args], { input, encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'pipe' });
  if (!existsSync(cli)) throw new Error('build produced no dist/cli.js');
});

describe('spillway spill (built CLI)', () => {
  it('prints a small output byte-identically', () => {
    const input = 'héllo\n\nworld  \n';
    const r = spill(['--session', 's', '--tool', 'Bash', '--root', tmp()], input);
    expect(r).toMatchObject({ code: 0, stdout: input });
  });

  it('spills a large output: prints the digest, the file holds the full text (0600)', () => {
    const root = tmp();
    const r = spill(['--session', 's', '--tool', 'Bash', '--call-id', 'toolu_7', '--args', 'npm test', '--root', root, '--max-inline', '4096'], big);
    expect(r.code).toBe(0);
    const file = /Full text: (\S+) —/.exec(r.stdout)?.[1];
    expect(file).toBeDefined();
    expect(file!.startsWith(root)).toBe(true);
    expect(readFileSync(file!, 'utf8')).toBe(big);
    expect(statSync(file!).mode & 0o777).toBe(0o600);
    expect(r.stdout).toContain('FAIL src/deep.test.ts > adds');
    expect(Buffer.byteLength(r.stdout)).toBeLessThan(4096);
  });

  it('--json prints {spilled, text, ref} and, for a repeat in another process, aliases', () => {
    const root = tmp();
    const a = JSON.parse(spill(['--session', 's', '--tool', 'Bash', '--root', root, '--max-inline', '1000', '--json'], big).stdout);
    const b = JSON.parse(spill(['--session', 's', '--tool', 'Bash', '--root', root, '--max-inline', '1000', '--json'], big).stdout);
    expect(a).toMatchObject({ spilled: true, aliased: false, ref: { bytes: Buffer.byteLength(big) } });
    expect(b).toMatchObject({ spilled: true, aliased: true, ref: { locator: a.ref.locator } });
    const small = JSON.parse(spill(['--session', 's', '--tool', 'Bash', '--root', root, '--json'], 'tiny').stdout);
    expect(small).toEqual({ spilled: false, text: 'tiny', reason: expect.stringMatching(/at or below/) });
  });

  it('prints non-UTF-8 input back byte for byte and writes no blob', () => {
    const root = tmp();
    const input = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x89]), Buffer.alloc(10_000, 0xc3)]);
    const r = spawnSync(process.execPath, [cli, 'spill', '--session', 's', '--tool', 'Bash', '--root', root, '--max-inline', '100'], { input });
    expect(r.status).toBe(0);
    expect(Buffer.compare(r.stdout, input)).toBe(0);
    expect(existsSync(root) ? readdirSync(root) : []).toEqual([]);
  });

  it('spills a log with stray bytes that are not UTF-8 from its exact bytes; the digest shows them as ?', () => {
    const root = tmp();
    const input = Buffer.concat([Buffer.from(big.slice(0, 30_000)), Buffer.from('caf\xe9 au lait\n', 'latin1'), Buffer.from(big.slice(30_000))]);
    const r = spawnSync(process.execPath, [cli, 'spill', '--session', 's', '--tool', 'Bash', '--root', root, '--json'], { input });
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout.toString('utf8'));
    expect(out).toMatchObject({ spilled: true, ref: { bytes: input.length } });
    expect(Buffer.compare(readFileSync(out.ref.locator), input)).toBe(0);
    expect(out.text).toContain('FAIL src/deep.test.ts > adds');
    expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(2048);
  });

  it('keeps a JSON tool result\'s shape with --json-input', () => {
    const value = { stdout: big, stderr: 'warn\n', interrupted: false };
    const r = spill(['--session', 's', '--tool', 'Bash', '--root', tmp(), '--max-inline', '2000', '--json-input'], JSON.stringify(value));
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['stdout', 'stderr', 'interrupted']);
    expect(out.stderr).toBe('warn\n');
  });

  it('prints JSON for a JSON string with --json-input: byte-identical under the threshold, a JSON string digest over it', () => {
    const small = JSON.stringify('a\tb "quoted"');
    expect(spill(['--session', 's', '--tool', 'Bash', '--root', tmp(), '--max-inline', '2000', '--json-input'], small).stdout).toBe(small);
    const r = spill(['--session', 's', '--tool', 'Bash', '--root', tmp(), '--max-inline', '2000', '--json-input'], JSON.stringify(big));
    const out = JSON.parse(r.stdout) as unknown;
    expect(typeof out).toBe('string');
    expect(out as string).toContain('[... spillway:');
  });

  it('uses the durable default root ($XDG_STATE_HOME/spillway/spills)', () => {
    const state = tmp();
    const r = spill(['--session', 's', '--tool', 'Bash', '--max-inline', '1000', '--json'], big, { XDG_STATE_HOME: state });
    expect(JSON.parse(r.stdout).ref.locator.startsWith(path.join(state, 'spillway', 'spills') + path.sep)).toBe(true);
  });

  it('prints the original and exits 0 when the spill fails (file in place of the root)', () => {
    const base = tmp();
    writeFileSync(path.join(base, 'f'), '');
    const r = spill(['--session', 's', '--tool', 'Bash', '--root', path.join(base, 'f', 'r'), '--max-inline', '1000'], big);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(big);
    expect(r.stderr).toMatch(/ENOTDIR/);
  });

  it('says so when the manifest line was cut short (a file size limit), and the next spill\'s record is not lost with it', () => {
    const root = tmp();
    const first = JSON.parse(spill(['--session', 's', '--tool', 'Bash', '--root', root, '--max-inline', '1000', '--json'], big).stdout);
    const manifest = path.join(path.dirname(first.ref.locator), 'spillway.jsonl');
    // Fill the manifest to 40 bytes short of 256 KiB (padding lines are skipped as malformed), then spill under a 256 KiB file size limit.
    const size = statSync(manifest).size;
    writeFileSync(manifest, 'x'.repeat(262_144 - 40 - size - 1) + '\n', { flag: 'a' });
    const args = ['spill', '--session', 's', '--tool', 'Bash', '--root', root, '--max-inline', '1000', '--json'];
    const limited = spawnSync('bash', ['-c', 'ulimit -f 256; exec "$0" "$@"', process.execPath, cli, ...args], { input: big + 'second\n', encoding: 'utf8' });
    expect(limited.status).toBe(0);
    expect(limited.stderr).toMatch(/manifest append failed .*cut short/);
    const third = JSON.parse(spill(args.slice(1), big + 'third\n').stdout);
    const files = readFileSync(manifest, 'utf8').split('\n').flatMap((l) => { try { return [JSON.parse(l).file as string]; } catch { return []; } });
    expect(files).toEqual([path.basename(first.ref.locator), path.basename(third.ref.locator)]);
  });

  it.each([
    [['--tool', 'Bash'], /--session/],
    [['--session', 's'], /--tool/],
    [['--session', 's', '--tool', 'Bash', '--max-inline', 'lots'], /--max-inline must be a positive integer/],
    [['--session', 's', '--tool', 'Bash', '--bogus'], /bogus/],
  ])('usage error (exit 2) for %j', (args, message) => {
    const r = spill(args as string[], 'x');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });
});

// Over 16 MiB the CLI writes the output to a file as it arrives instead of holding it (docs/engine.md).
describe('spillway spill, an output too big to hold', () => {
  const middle = 'src/lib.rs:812: error[E0599]: no method named `frob` found';
  const huge = (() => {
    const lines = Array.from({ length: 1000 }, (_, i) => `   Compiling crate-${i} v0.${i}.0 (\u5efa\u7acb \u2014 ok) ${'·'.repeat(i % 40)}`).join('\n') + '\n';
    const half = lines.repeat(Math.ceil(12_000_000 / Buffer.byteLength(lines)));
    return Buffer.from(half + middle + '\n' + half, 'utf8');
  })();
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const run = (args: string[], input: Buffer, shell = '') =>
    spawnSync('bash', ['-c', `${shell}exec "$0" "$@"`, process.execPath, cli, 'spill', '--session', 's', ...args], { input, maxBuffer: 1 << 30 });
  const temps = (root: string) => (existsSync(root) ? readdirSync(root).filter((n) => n.startsWith('.spillway-tmp-')) : []);

  it('spills it from the file: the blob is the output byte for byte, the digest has the failure line, a repeat aliases', () => {
    const root = tmp();
    const r = run(['--tool', 'Bash', '--root', root, '--json'], huge);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout.toString('utf8'));
    expect(out).toMatchObject({ spilled: true, aliased: false, ref: { bytes: huge.length, sha256: sha(huge) } });
    expect(out.text).toContain(middle);
    expect(Buffer.byteLength(out.text)).toBeLessThan(4096);
    const blob = readFileSync(out.ref.locator);
    expect(sha(blob)).toBe(sha(huge));
    expect(statSync(out.ref.locator).mode & 0o777).toBe(0o600);
    const [record] = readFileSync(path.join(path.dirname(out.ref.locator), 'spillway.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(record).toMatchObject({ bytes: huge.length, lines: huge.toString('utf8').split('\n').length - 1, sha256: sha(huge) });
    expect(temps(root)).toEqual([]);

    const again = JSON.parse(run(['--tool', 'Bash', '--root', root, '--json'], huge).stdout.toString('utf8'));
    expect(again).toMatchObject({ spilled: true, aliased: true, ref: { locator: out.ref.locator } });
    expect(readdirSync(path.dirname(out.ref.locator)).filter((n) => n.endsWith('.txt'))).toHaveLength(1);
    expect(temps(root)).toEqual([]);
  });

  it.each([
    ['it is binary (a PNG header: not UTF-8 at the start)', ['--tool', 'Bash'], Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]), huge])],
    ['a read-like tool', ['--tool', 'Read'], huge],
  ])('prints it back byte for byte when %s, and keeps no file', (_why, args, input) => {
    const root = tmp();
    const r = run([...args, '--root', root], input);
    expect(r.status).toBe(0);
    expect(r.stdout.length).toBe(input.length);
    expect(sha(r.stdout)).toBe(sha(input));
    expect(existsSync(root) ? readdirSync(root).flatMap((d) => (d.startsWith('.') ? [d] : readdirSync(path.join(root, d)))) : []).toEqual([]);
  });

  it('prints it back byte for byte when the file cannot be written whole (a file size limit), and leaves no temp', () => {
    const root = tmp();
    const r = run(['--tool', 'Bash', '--root', root], huge, 'ulimit -f 8000; ');
    expect(r.status).toBe(0);
    expect(sha(r.stdout)).toBe(sha(huge));
    expect(r.stderr.toString('utf8')).toMatch(/could not write the output to a file \(EFBIG/);
    expect(temps(root)).toEqual([]);
  });

  it('spills it when it holds NUL bytes (find -print0 prints them; NUL is UTF-8), with --json too', () => {
    const root = tmp();
    const input = Buffer.concat([huge.subarray(0, 9000), Buffer.alloc(3, 0), huge.subarray(9000)]);
    const r = run(['--tool', 'Bash', '--root', root, '--json'], input);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout.toString('utf8'));
    expect(out).toMatchObject({ spilled: true, ref: { bytes: input.length } });
    expect(sha(readFileSync(out.ref.locator))).toBe(sha(input));
  });

  it('does not hold it: four times the output costs less extra memory than the extra output', () => {
    const dir = tmp();
    const preload = path.join(dir, 'peak.cjs');
    writeFileSync(preload, "process.on('exit', () => process.stderr.write(`peak-rss ${process.resourceUsage().maxRSS * 1024}\\n`));\n");
    // Through a shell that forks it: Linux counts a process's peak RSS from its parent's at the fork (kept across
    // exec), and this test's process, holding these outputs, can be larger than the command ever gets.
    const peak = (input: Buffer) => {
      const r = spawnSync('sh', ['-c', '"$@"; exit', 'sh', process.execPath, '--require', preload, cli, 'spill', '--session', 's', '--tool', 'Bash', '--root', path.join(dir, 'r')], { input, maxBuffer: 1 << 30 });
      expect(r.status).toBe(0);
      return Number(/peak-rss (\d+)/.exec(r.stderr.toString('utf8'))?.[1]);
    };
    const four = Buffer.concat([huge, huge, huge, huge]);
    const extra = peak(four) - peak(huge);
    expect(extra).toBeLessThan(four.length - huge.length);
  });

  it('prints a kept output too big for one JSON string as streamed base64 with --json (300 MB, a read-like tool)', async () => {
    const block = createHash('sha256').update('seed').digest().toString('hex').repeat(1 << 14); // 1 MiB of text
    const blocks = 300;
    const child = spawn(process.execPath, [cli, 'spill', '--session', 's', '--tool', 'Read', '--root', tmp(), '--json'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const inputHash = createHash('sha256');
    const feed = (async () => {
      for (let i = 0; i < blocks; i++) {
        inputHash.update(block);
        if (!child.stdin.write(block)) await new Promise((r) => child.stdin.once('drain', r));
      }
      child.stdin.end();
    })();
    // Decode the base64 as it comes (never held whole): the output is 400 MB.
    const outputHash = createHash('sha256');
    let head = '';
    let pending = '';
    let tail = '';
    const PREFIX = '{"spilled":false,"text":"';
    for await (const chunk of child.stdout.setEncoding('latin1') as AsyncIterable<string>) {
      let text = chunk;
      if (head.length < PREFIX.length) {
        const take = PREFIX.length - head.length;
        head += text.slice(0, take);
        text = text.slice(take);
      }
      if (tail) {
        tail += text;
        continue;
      }
      const quote = text.indexOf('"');
      if (quote >= 0) {
        tail = text.slice(quote);
        text = text.slice(0, quote);
      }
      const all = pending + text;
      const whole = all.length - (all.length % 4);
      outputHash.update(Buffer.from(all.slice(0, whole), 'base64'));
      pending = all.slice(whole);
    }
    outputHash.update(Buffer.from(pending, 'base64'));
    await feed;
    expect(head).toBe(PREFIX);
    expect(JSON.parse(`{"text":"${tail}`)).toMatchObject({ encoding: 'base64', reason: expect.stringMatching(/read-like/) });
    expect(outputHash.digest('hex')).toBe(inputHash.digest('hex'));
  });

  it.each([
    ['a folder', (file: string) => mkdirSync(file)],
    ['a FIFO', (file: string) => execFileSync('mkfifo', [file])],
  ])('prints it back byte for byte when the save fails after staging (%s in place of the manifest), and leaves no temp', (_what, plant) => {
    const root = tmp();
    const session = path.join(root, `session-${createHash('sha256').update('s').digest('hex').slice(0, 12)}`);
    mkdirSync(session, { recursive: true, mode: 0o700 });
    plant(path.join(session, 'spillway.jsonl'));
    for (const input of [huge, Buffer.concat([Buffer.from('a'.repeat(9000)), Buffer.from([0xe9]), Buffer.from(big)])]) {
      const r = run(['--tool', 'Bash', '--root', root], input);
      expect(r.status).toBe(0);
      expect(sha(r.stdout)).toBe(sha(input));
      expect(temps(root)).toEqual([]);
    }
  });

  it('prints it back byte for byte when not even its first piece could be written (a 10 KiB file size limit)', () => {
    const root = tmp();
    const r = run(['--tool', 'Bash', '--root', root], huge, 'ulimit -f 10; ');
    expect(r.status).toBe(0);
    expect(sha(r.stdout)).toBe(sha(huge));
    expect(temps(root)).toEqual([]);
  });

  it('leaves no temp behind when the reader goes away while it is printed back', () => {
    const root = tmp();
    const r = spawnSync('bash', ['-c', '"$0" "$@" | head -c 100 > /dev/null', process.execPath, cli, 'spill', '--session', 's', '--tool', 'Read', '--root', root], { input: huge });
    expect(r.status).toBe(0);
    expect(temps(root)).toEqual([]);
  });

  it('prints it back byte for byte when no file can be made (a file in place of the root)', () => {
    const base = tmp();
    writeFileSync(path.join(base, 'f'), '');
    const r = run(['--tool', 'Bash', '--root', path.join(base, 'f', 'r')], huge);
    expect(r.status).toBe(0);
    expect(sha(r.stdout)).toBe(sha(huge));
    expect(r.stderr.toString('utf8')).toMatch(/ENOTDIR/);
  });
});
