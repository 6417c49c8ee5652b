// `spillway spill` against hostile store folders and crashes: it never hangs,
// never writes outside, never leaves a truncated blob, and the result is the
// original whenever no digest was delivered.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { watch, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseDirs, cli, collect, hostileFile, run, sessionFolder, spawnCli, type CaseDirs } from './helpers';

const { base, sentinel } = hostileFile('spill');

const big = (tag: string, bytes = 50_000): string => `${tag}\n` + 'y'.repeat(bytes) + `\nend of ${tag}\n`;

interface SpillJson {
  spilled: boolean;
  text: string;
  ref?: { locator: string };
}

async function spill(c: CaseDirs, input: string | Buffer, extra: string[] = []): Promise<{ code: number | null; stdout: Buffer; stderr: string; timedOut: boolean }> {
  return run(['spill', '--session', 'hostile', '--tool', 'Bash', ...extra], { env: c.env, input, timeoutMs: 20_000 });
}

/** Files of the session folder that are not Spillway's own bookkeeping. */
async function blobFiles(c: CaseDirs): Promise<string[]> {
  const names = await fsp.readdir(sessionFolder(c.spills, 'hostile')).catch(() => [] as string[]);
  return names.filter((n) => !n.startsWith('.') && n !== 'spillway.jsonl').map((n) => path.join(sessionFolder(c.spills, 'hostile'), n));
}

async function listedBlobs(c: CaseDirs): Promise<string[]> {
  const r = await run(['list', '--json'], { env: c.env });
  const out = JSON.parse(r.stdout.toString('utf8')) as { sessions: Array<{ blobs: Array<{ path: string }> }> };
  return out.sessions.flatMap((s) => s.blobs.map((b) => b.path));
}

describe('the manifest', () => {
  it('a FIFO in its place: spill neither hangs nor loses the output', async () => {
    const c = await caseDirs(base(), 'fifo-manifest');
    const folder = sessionFolder(c.spills, 'hostile');
    await fsp.mkdir(folder, { recursive: true, mode: 0o700 });
    await new Promise<void>((resolve, reject) => spawn('mkfifo', [path.join(folder, 'spillway.jsonl')]).on('exit', (code) => (code === 0 ? resolve() : reject(new Error('mkfifo')))));
    const body = big('fifo');
    const r = await spill(c, body);
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(0);
    expect(r.stdout.toString('utf8')).toBe(body);
    expect(await blobFiles(c)).toEqual([]); // nothing written that no manifest lists
  });

  it('hard-linked to a file outside: no record is appended to it, the output comes back whole', async () => {
    const c = await caseDirs(base(), 'hardlink-manifest');
    const folder = sessionFolder(c.spills, 'hostile');
    await fsp.mkdir(folder, { recursive: true, mode: 0o700 });
    await fsp.link(path.join(sentinel(), 'spillway.jsonl'), path.join(folder, 'spillway.jsonl'));
    const body = big('hardlink');
    const r = await spill(c, body);
    expect(r.timedOut).toBe(false);
    expect(r.stdout.toString('utf8')).toBe(body);
  });

  it('the session folder is a file: the output comes back whole', async () => {
    const c = await caseDirs(base(), 'folder-is-file');
    await fsp.mkdir(c.spills, { recursive: true, mode: 0o700 });
    await fsp.writeFile(sessionFolder(c.spills, 'hostile'), 'not a folder');
    const body = big('file');
    expect((await spill(c, body)).stdout.toString('utf8')).toBe(body);
  });
});

describe('a dedup lock planted in the session folder', () => {
  it('held by a dead process, by a process elsewhere for minutes, or a symlink: broken, the spill goes on and writes one blob', async () => {
    const c = await caseDirs(base(), 'planted-lock');
    const folder = sessionFolder(c.spills, 'hostile');
    await fsp.mkdir(folder, { recursive: true, mode: 0o700 });
    const bodies = [big('lock-dead'), big('lock-symlink'), big('lock-elsewhere')];
    const lockOf = (body: string): string => path.join(folder, `.spillway-lock-${createHash('sha256').update(body).digest('hex').slice(0, 32)}`);
    await fsp.writeFile(lockOf(bodies[0]!), '999999999');
    await fsp.symlink(path.join(sentinel(), 'secret.txt'), lockOf(bodies[1]!));
    // Another host's or PID namespace's holder cannot be asked: its lock is broken once two minutes old.
    await fsp.writeFile(lockOf(bodies[2]!), '1@0123abcd');
    const minutesAgo = new Date(Date.now() - 120_000);
    await fsp.utimes(lockOf(bodies[2]!), minutesAgo, minutesAgo);
    for (const body of bodies) {
      const r = await spill(c, body, ['--json']);
      expect(r.timedOut).toBe(false);
      const out = JSON.parse(r.stdout.toString('utf8')) as SpillJson;
      expect(out.spilled).toBe(true);
      expect(await fsp.readFile(out.ref!.locator, 'utf8')).toBe(body);
      await expect(fsp.lstat(lockOf(body))).rejects.toThrow();
    }
  });
});

describe('spill passes output through byte for byte', () => {
  it('keeps a UTF-8 byte order mark', async () => {
    const c = await caseDirs(base(), 'bom');
    const small = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('short output\n')]);
    expect((await spill(c, small)).stdout.equals(small)).toBe(true);
    const large = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(big('bom'))]);
    const out = JSON.parse((await spill(c, large, ['--json'])).stdout.toString('utf8')) as SpillJson;
    expect(out.spilled).toBe(true);
    expect((await fsp.readFile(out.ref!.locator)).equals(large)).toBe(true);
  });

  it('--json-input with stdin that is not JSON prints the original, exit 0', async () => {
    const c = await caseDirs(base(), 'json-input');
    for (const body of ['not json at all\n', big('{ broken json')]) {
      const r = await spill(c, body, ['--json-input']);
      expect(r.code).toBe(0);
      expect(r.stdout.toString('utf8')).toBe(body);
    }
  });
});

describe('a spill killed (SIGKILL)', () => {
  /** A spill killed the moment a file with a blob's name appears in its folder: on a write in place, mid-write. */
  it('as its blob appears: never a truncated blob, listed or not (6 runs)', async () => {
    const c = await caseDirs(base(), 'kill-on-appear');
    // A first spill creates the folder (and its manifest) to watch.
    expect((await spill(c, big('first'))).code).toBe(0);
    const folder = sessionFolder(c.spills, 'hostile');
    const body = big('killed', 8_000_000);
    for (let i = 0; i < 6; i++) {
      const known = new Set(await fsp.readdir(folder));
      const child = spawnCli(['spill', '--session', 'hostile', '--tool', 'Bash', '--call-id', `k${i}`], c.env);
      const watcher = watch(folder, (_event, name) => {
        if (name && !name.startsWith('.') && !known.has(name)) child.kill('SIGKILL');
      });
      const r = await collect(child, { input: body, timeoutMs: 60_000 });
      watcher.close();
      expect(r.timedOut).toBe(false);
      if (r.signal === 'SIGKILL') expect(r.stdout.length, 'a killed spill delivered part of a digest').toBe(0);
    }
    for (const file of await blobFiles(c)) {
      const text = await fsp.readFile(file, 'utf8');
      expect(text === big('first') || text === body, `${file} is truncated (${text.length} bytes)`).toBe(true);
    }
    for (const file of await listedBlobs(c)) expect((await fsp.stat(file)).size).toBeGreaterThan(50_000);
  });

  for (const stage of ['blob-write', 'before-rename', 'before-manifest', 'manifest-append'] as const) {
    it(`at ${stage}: nothing, or a complete listed blob; the next spill reclaims what was left`, async () => {
      const c = await caseDirs(base(), `kill-${stage}`);
      const body = big(stage, 3_000_000);
      const child = spawnCli(['spill', '--session', 'hostile', '--tool', 'Bash'], { ...c.env, SPILLWAY_TEST_PAUSE: stage });
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        if (d.includes(`spillway-paused ${stage}`)) child.kill('SIGKILL');
      });
      const r = await collect(child, { input: body, timeoutMs: 30_000 });
      expect(r.timedOut, 'the pause point was never reached').toBe(false);
      expect(r.signal).toBe('SIGKILL');
      expect(r.stdout.length).toBe(0); // no digest delivered: the agent keeps the original
      const files = await blobFiles(c);
      const listed = await listedBlobs(c);
      expect(listed.sort()).toEqual(files.sort());
      for (const file of files) expect(await fsp.readFile(file, 'utf8')).toBe(body);
      expect(files).toHaveLength(stage === 'before-manifest' || stage === 'manifest-append' ? 1 : 0);
      // The next spill into the root removes the dead writer's temp.
      expect((await spill(c, big('next'))).code).toBe(0);
      expect((await fsp.readdir(c.spills)).filter((n) => n.startsWith('.spillway-tmp-'))).toEqual([]);
    });
  }
});

describe('a writer in another PID namespace (a container sharing the folder)', () => {
  it("keeps its temp while it writes: a spill there cannot ask whether the writer runs; here, once it is dead, it is reclaimed", async () => {
    const c = await caseDirs(base(), 'pid-namespace');
    const temps = async (): Promise<string[]> => (await fsp.readdir(c.spills)).filter((n) => n.startsWith('.spillway-tmp-'));
    // A writer here, stopped with its blob half written: its temp waits in the store's root.
    const writer = spawnCli(['spill', '--session', 'hostile', '--tool', 'Bash'], { ...c.env, SPILLWAY_TEST_PAUSE: 'blob-write' });
    const paused = new Promise<void>((resolve) => writer.stderr!.setEncoding('utf8').on('data', (d: string) => d.includes('spillway-paused') && resolve()));
    writer.stdin!.end(big('writer', 3_000_000));
    await paused;
    const writing = await temps();
    expect(writing).toHaveLength(1);
    try {
      // A spill into the same root from a new PID namespace, where the writer's pid names no process.
      const elsewhere = spawn('unshare', ['--user', '--map-root-user', '--pid', '--fork', process.execPath, cli(), 'spill', '--session', 'other', '--tool', 'Bash', '--json'], { env: c.env, stdio: ['pipe', 'pipe', 'pipe'] });
      const r = await collect(elsewhere, { input: big('from the container'), timeoutMs: 20_000 });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect((JSON.parse(r.stdout.toString('utf8')) as SpillJson).spilled).toBe(true);
      expect(await temps()).toEqual(writing);
    } finally {
      writer.kill('SIGKILL');
      await new Promise((resolve) => writer.once('close', resolve));
    }
    // Here the writer is known dead: the next spill removes what it left.
    expect((await spill(c, big('next'))).code).toBe(0);
    expect(await temps()).toEqual([]);
  });
});
