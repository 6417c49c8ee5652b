// The hostile suite's tools: the CLI built from the current sources into a
// temp folder, run under a timeout; a case folder with its own HOME, TMPDIR
// and state folder (every default root inside it); and a sentinel tree
// outside every root whose hash must not change.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

const REPO = path.resolve(__dirname, '../..');
let built: string | undefined;

/**
 * dist-like CLI bundle of the current src/ (never a stale dist/), written to
 * `out`. SPILLWAY_HOSTILE_SRC=<folder holding another src/> runs the suite
 * against other sources, e.g. an older commit's, to see which cases it fails.
 */
export function buildCli(out: string): string {
  const src = process.env.SPILLWAY_HOSTILE_SRC ? path.resolve(process.env.SPILLWAY_HOSTILE_SRC, 'src') : path.join(REPO, 'src');
  buildSync({
    entryPoints: [path.join(src, 'cli/main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: out,
    logLevel: 'silent',
    nodePaths: [path.join(REPO, 'node_modules')],
  });
  return (built = out);
}

/** The CLI hostileFile() built for this file. */
export function cli(): string {
  if (!built) throw new Error('call hostileFile() first: it builds the CLI');
  return built;
}

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  input?: string | Buffer;
  /** Killed (SIGKILL) after this long: a hang fails the case instead of the suite. */
  timeoutMs?: number;
}

export function spawnCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [cli(), ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Run the CLI to its end (or to the timeout). */
export function run(args: string[], options: RunOptions): Promise<Run> {
  return collect(spawnCli(args, options.env), options);
}

export function collect(child: ChildProcess, options: { input?: string | Buffer; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 20_000);
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin!.on('error', () => undefined); // a child that exits before reading all of stdin
    child.stdin!.end(options.input ?? '');
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr, timedOut });
    });
  });
}

export interface CaseDirs {
  dir: string;
  home: string;
  tmp: string;
  state: string;
  /** The engine's default store root. */
  spills: string;
  claudeProjects: string;
  piSessions: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh folder whose HOME, TMPDIR and XDG folders hold every default root. */
export async function caseDirs(base: string, name: string): Promise<CaseDirs> {
  const dir = await fsp.mkdtemp(path.join(base, `${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}-`));
  const home = path.join(dir, 'home');
  const tmp = path.join(dir, 'tmp');
  const state = path.join(dir, 'state');
  for (const d of [home, tmp, state]) await fsp.mkdir(d, { recursive: true, mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: tmp,
    XDG_STATE_HOME: state,
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    LANG: 'C.UTF-8',
  };
  return {
    dir,
    home,
    tmp,
    state,
    spills: path.join(state, 'spillway', 'spills'),
    claudeProjects: path.join(home, '.claude', 'projects'),
    piSessions: path.join(home, '.pi', 'agent', 'sessions'),
    env,
  };
}

export async function write(file: string, content: string | Buffer, mode = 0o600): Promise<string> {
  await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await fsp.writeFile(file, content, { mode });
  return file;
}

/** Hash of a tree: every entry's relative path, type, mode, size and content (symlinks: their target). Not nlink: linking to a file is not changing it. */
export async function treeHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const visit = async (rel: string): Promise<void> => {
    const abs = path.join(dir, rel);
    const st = await fsp.lstat(abs);
    hash.update(`${rel}\0${st.mode}\0`);
    if (st.isSymbolicLink()) hash.update(`link:${await fsp.readlink(abs)}\0`);
    else if (st.isFile()) hash.update(await fsp.readFile(abs));
    else if (st.isDirectory()) for (const name of (await fsp.readdir(abs)).sort()) await visit(path.join(rel, name));
    hash.update('\n');
  };
  await visit('');
  return hash.digest('hex');
}

/** Names a sentinel holds: the ones attacks aim at (blob names, manifests, agent logs, transcripts). */
export const SENTINEL_NAMES = Array.from({ length: 150 }, (_, i) => `b${String(i).padStart(3, '0')}.txt`);
export const SECRET = 'SENTINEL-SECRET-7f3a9c';

/** A tree outside every root: files named like the blobs the cases make, a manifest, a secret. */
export async function makeSentinel(base: string): Promise<{ dir: string; hash: () => Promise<string> }> {
  const dir = path.join(base, 'sentinel');
  for (const name of SENTINEL_NAMES) await write(path.join(dir, name), `sentinel ${name}\n`);
  await write(path.join(dir, 'spillway.jsonl'), '{"sentinel":true}\n');
  await write(path.join(dir, 'secret.txt'), `${SECRET} private\n`);
  await write(path.join(dir, 'pi-bash-deadbeefdeadbeef.log'), `${SECRET} pi log\n`);
  await write(path.join(dir, 'transcript.jsonl'), JSON.stringify({ type: 'user', cwd: `/${SECRET}`, message: { content: `${SECRET} prompt` } }) + '\n');
  await fsp.mkdir(path.join(dir, 'nested', 'tool-results'), { recursive: true });
  for (const name of SENTINEL_NAMES) await write(path.join(dir, 'nested', 'tool-results', name), `nested ${name}\n`);
  return { dir, hash: () => treeHash(dir) };
}

/** A Spillway session folder made by hand: `names` as blobs plus their manifest records. */
export async function spillwaySession(folder: string, sessionId: string, names: readonly string[], body = (name: string) => `blob ${name}\n`): Promise<string[]> {
  const files: string[] = [];
  const records: string[] = [];
  for (const name of names) {
    const text = body(name);
    files.push(await write(path.join(folder, name), text));
    records.push(JSON.stringify({ v: 1, file: name, tool: 'Bash', toolCallId: `call-${name}`, bytes: Buffer.byteLength(text), lines: 1, sha256: createHash('sha256').update(text).digest('hex'), createdAt: new Date(0).toISOString(), sessionId }));
  }
  await write(path.join(folder, 'spillway.jsonl'), records.join('\n') + '\n');
  return files;
}

/** The dsh-style folder the engine uses for `sessionId` under `root`. */
export function sessionFolder(root: string, sessionId: string): string {
  return path.join(root, `session-${createHash('sha256').update(sessionId).digest('hex').slice(0, 12)}`);
}

/**
 * A process that keeps swapping each folder for a symlink to `target` and
 * back (rename away, symlink, unlink, rename back). stop() kills it and puts
 * every folder back.
 */
export function swapper(folders: readonly string[], target: string): { stop: () => Promise<void> } {
  const script = `
    const fs = require('fs');
    const [target, ...dirs] = process.argv.slice(1);
    for (;;) {
      // Each state lasts a random while (about 0 to 100 µs): any gap between a check and a use gets hit.
      for (const d of dirs) { try { fs.renameSync(d, d + '.real'); fs.symlinkSync(target, d); } catch {} }
      for (let i = Math.random() * 1e5; i > 0; i--);
      for (const d of dirs) { try { fs.unlinkSync(d); fs.renameSync(d + '.real', d); } catch {} }
      for (let i = Math.random() * 1e5; i > 0; i--);
    }`;
  const child = spawn(process.execPath, ['-e', script, target, ...folders], { stdio: 'ignore' });
  return {
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      for (const d of folders) {
        const st = await fsp.lstat(d).catch(() => undefined);
        const real = await fsp.lstat(`${d}.real`).catch(() => undefined);
        if (st?.isSymbolicLink()) await fsp.unlink(d);
        if (real) {
          if (st?.isDirectory()) await mergeInto(d, `${d}.real`); // a folder a spill created in the gap
          await fsp.rename(`${d}.real`, d);
        }
      }
    },
  };
}

/** Move `from`'s files into `to` (manifests appended) and remove `from`. */
async function mergeInto(from: string, to: string): Promise<void> {
  for (const name of await fsp.readdir(from)) {
    const src = path.join(from, name);
    if (name === 'spillway.jsonl') await fsp.appendFile(path.join(to, name), await fsp.readFile(src));
    else await fsp.rename(src, path.join(to, name));
  }
  await fsp.rm(from, { recursive: true });
}

/** Bytes a human-output stream must never carry: C0 controls but \t and \n, DEL, C1 (as UTF-8), bidi overrides. */
export const TERMINAL_CONTROL = /[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

/**
 * The hooks every hostile file uses: a base folder, the CLI built, and the
 * sentinel checked after every case (and rebuilt when a case broke it, so the
 * next case is judged on its own).
 */
export function hostileFile(name: string): { base: () => string; sentinel: () => string } {
  let base = '';
  let sentinel: Awaited<ReturnType<typeof makeSentinel>>;
  let initial = '';
  beforeAll(async () => {
    base = await fsp.mkdtemp(path.join(os.tmpdir(), `spillway-hostile-${name}-`));
    buildCli(path.join(base, 'cli.js'));
    sentinel = await makeSentinel(base);
    initial = await sentinel.hash();
  });
  afterEach(async () => {
    const now = await sentinel.hash();
    if (now !== initial) {
      await fsp.rm(sentinel.dir, { recursive: true, force: true });
      sentinel = await makeSentinel(base);
    }
    expect(now, 'the sentinel tree outside the roots changed').toBe(initial);
  });
  afterAll(async () => fsp.rm(base, { recursive: true, force: true }));
  return { base: () => base, sentinel: () => sentinel.dir };
}
