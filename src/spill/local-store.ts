// The local SpillStore: private, session-scoped blob files on this machine.
//
// Safety rules (each one has a test): folders are created 0700, blob files are
// created exclusively with mode 0600 and O_NOFOLLOW, every folder below the
// root is lstat-checked so a symlink planted in place of a session folder
// fails the save instead of redirecting it, names are one sanitized path
// segment, and every path is checked to stay inside the root.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp, constants as C } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { appendManifest, MANIFEST_VERSION, readManifestFrom, type ManifestRecord } from './manifest';
import { countLines, countNewlines, lineCountFrom, sha256Hex } from './text';
import {
  SpillError,
  type SaveTextSpill,
  type SpillLocator,
  type SpillLogger,
  type SpillOwner,
  type SpillRef,
  type SpillSource,
  type SpillStore,
} from './types';

/** Where a session's blobs (and its manifest) live. */
export interface BlobLayout {
  /** Absolute folder of a session's blobs; must lie inside the store's root. */
  dirFor(owner: SpillOwner): string;
}

/** dsh's layout: `<root>/session-<first 12 hex of sha256(sessionId)>`. */
export function sessionHashLayout(root: string): BlobLayout {
  const abs = path.resolve(root);
  return { dirFor: (owner) => path.join(abs, `session-${sha256Hex(owner.sessionId).slice(0, 12)}`) };
}

/**
 * A durable per-user state folder (never /tmp, which is lost at reboot):
 * `$XDG_STATE_HOME/spillway/spills`, else `~/.local/state/spillway/spills`
 * (`%LOCALAPPDATA%\spillway\spills` on Windows).
 */
export function defaultSpillRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (process.platform === 'win32' && env.LOCALAPPDATA) return path.join(env.LOCALAPPDATA, 'spillway', 'spills');
  const xdg = env.XDG_STATE_HOME;
  const state = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(state, 'spillway', 'spills');
}

/** Longest file name most file systems accept, in bytes. */
export const MAX_NAME_BYTES = 255;
const PREFIX_HEX = 12;

/**
 * One safe path segment: every character outside `[A-Za-z0-9._-]` (separators,
 * `~`, control and non-ASCII characters) becomes `_`, a leading dot becomes `_`
 * (no hidden files, no `.`/`..`), empty becomes `output`, and the result fits
 * `maxBytes` keeping a short extension.
 */
export function sanitizeSegment(name: string, maxBytes = MAX_NAME_BYTES): string {
  let s = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_');
  if (s === '') s = 'output';
  if (s.length <= maxBytes) return s;
  const ext = /\.[A-Za-z0-9]{1,8}$/.exec(s)?.[0] ?? '';
  return s.slice(0, Math.max(1, maxBytes - ext.length)) + ext;
}

export interface LocalSpillStoreOptions {
  /** Store root; default `defaultSpillRoot()`. Every blob lies inside it. */
  root?: string;
  /** Folder per session; default `sessionHashLayout(root)`. */
  layout?: BlobLayout;
  logger?: SpillLogger;
  /** Random name prefix (hex); injectable so tests can aim at a name. */
  randomId?: () => string;
}

/** Alias record input: `original` is the ref an earlier save (or find) returned. */
export interface AliasSpill {
  owner: SpillOwner;
  source: SpillSource;
  original: SpillRef;
  args?: unknown;
  turn?: number;
}

/**
 * A file the agent wrote itself (e.g. Claude Code's `tool-results/b<id>.txt`).
 * `file` is relative to the session's manifest folder (`../tool-results/b1.txt`)
 * and must resolve inside the root. bytes/lines/sha256 are computed by
 * streaming the file when not given.
 */
export interface ExternalSpill {
  owner: SpillOwner;
  source: SpillSource;
  file: string;
  args?: unknown;
  turn?: number;
  bytes?: number;
  lines?: number;
  sha256?: string;
}

export const LOCAL_RETRIEVAL_HINT = 'Use read with offset/limit on this path, or grep it to search within it.';

export class LocalSpillStore implements SpillStore {
  readonly root: string;
  readonly layout: BlobLayout;
  private readonly logger: SpillLogger | undefined;
  private readonly randomId: () => string;

  constructor(opts: LocalSpillStoreOptions = {}) {
    this.root = path.resolve(opts.root ?? defaultSpillRoot());
    this.layout = opts.layout ?? sessionHashLayout(this.root);
    this.logger = opts.logger;
    this.randomId = opts.randomId ?? (() => randomBytes(PREFIX_HEX / 2).toString('hex'));
  }

  /** Writes the full text first; the manifest line follows (its failure is logged, the blob stays valid). */
  async saveText(input: SaveTextSpill): Promise<SpillRef> {
    const sessionId = input.owner?.sessionId;
    if (!sessionId) throw new SpillError('ENOSESSION', 'no session id: refusing to spill outside a session');
    const dir = await this.ensureSessionDir(input.owner);
    const prefix = sanitizeSegment(this.randomId()).slice(0, 32);
    const name = `${prefix}-${sanitizeSegment(input.suggestedName, MAX_NAME_BYTES - prefix.length - 1)}`;
    const file = path.join(dir, name);
    this.assertInside(file, dir);
    const data = Buffer.from(input.content, 'utf8');
    await createExactly(file, data);
    const sha256 = sha256Hex(data);
    const lines = countLines(data);
    await this.append(dir, manifestRecord(input, name, { bytes: data.length, lines, sha256 }));
    return { locator: file as SpillLocator, bytes: data.length, retrievalHint: LOCAL_RETRIEVAL_HINT, sha256, lines };
  }

  /**
   * An empty private file (0600, created exclusively in the session's 0700
   * folder) that another process fills, e.g. a shell capturing a command's
   * output; recorded later with `recordExternal`. Fails if the name is taken.
   */
  async createEmpty(owner: SpillOwner, name: string): Promise<string> {
    const dir = await this.ensureSessionDir(owner);
    const file = path.join(dir, sanitizeSegment(name));
    this.assertInside(file, dir);
    await createExactly(file, Buffer.alloc(0));
    return file;
  }

  /**
   * An earlier blob of this session with this sha256, found through the
   * session's manifest, so dedup works across processes (one hook process per
   * tool call). Only a blob still on disk with the recorded size counts.
   */
  async findBySha256(owner: SpillOwner, sha256: string): Promise<SpillRef | undefined> {
    if (!owner?.sessionId) return undefined;
    const dir = await this.existingSessionDir(owner);
    if (!dir) return undefined;
    for (const r of await this.recordsWithSha(dir, sha256)) {
      const file = path.resolve(dir, r.aliasOf ?? r.file);
      if (!this.isInside(file, this.resolvedRoot ?? this.root)) continue;
      const st = await fsp.lstat(file).catch(() => undefined);
      if (!st?.isFile() || st.size !== r.bytes) continue;
      return { locator: file as SpillLocator, bytes: r.bytes, retrievalHint: LOCAL_RETRIEVAL_HINT, sha256, lines: r.lines };
    }
    return undefined;
  }

  /** Per session folder: records by sha256, read incrementally (the manifest only grows). */
  private readonly shaIndex = new Map<string, { ino: number; offset: number; bySha: Map<string, ManifestRecord[]> }>();

  private async recordsWithSha(dir: string, sha256: string): Promise<ManifestRecord[]> {
    let entry = this.shaIndex.get(dir);
    let tail = await readManifestFrom(dir, entry?.offset ?? 0);
    if (entry && (tail.ino !== entry.ino || tail.offset < entry.offset)) {
      entry = undefined; // replaced or truncated: start over
      tail = await readManifestFrom(dir, 0);
    }
    if (!entry) {
      entry = { ino: tail.ino, offset: 0, bySha: new Map() };
      this.shaIndex.set(dir, entry);
    }
    entry.offset = tail.offset;
    for (const r of tail.records) {
      const list = entry.bySha.get(r.sha256);
      if (list) list.push(r);
      else entry.bySha.set(r.sha256, [r]);
    }
    return entry.bySha.get(sha256) ?? [];
  }

  /** Record that a later identical result reuses `original` (no second write). */
  async recordAlias(input: AliasSpill): Promise<SpillRef> {
    const dir = await this.ensureSessionDir(input.owner);
    const rel = path.relative(dir, input.original.locator);
    const sha256 = input.original.sha256;
    if (!sha256) throw new SpillError('EINVAL', 'alias needs the original sha256');
    await this.append(dir, {
      ...manifestRecord(input, rel, { bytes: input.original.bytes, lines: input.original.lines ?? 0, sha256 }),
      aliasOf: rel,
    });
    return input.original;
  }

  /** Record a blob the agent wrote itself; returns a ref to it. */
  async recordExternal(input: ExternalSpill): Promise<SpillRef> {
    if (path.isAbsolute(input.file)) throw new SpillError('EINVAL', `external file must be relative to the manifest folder: ${input.file}`);
    const dir = await this.ensureSessionDir(input.owner);
    const abs = path.resolve(dir, input.file);
    const root = (await this.realRoot()) ?? this.root;
    this.assertInside(abs, root);
    const st = await fsp.lstat(abs);
    if (!st.isFile()) throw new SpillError('EINVAL', `not a regular file: ${abs}`);
    // A symlinked folder on the way must not lead out of the root either.
    this.assertInside(await fsp.realpath(abs), root);
    const facts =
      input.sha256 !== undefined && input.lines !== undefined && input.bytes !== undefined
        ? { sha256: input.sha256, lines: input.lines, bytes: input.bytes }
        : await hashAndCount(abs);
    await this.append(dir, manifestRecord(input, input.file.split(path.sep).join('/'), facts));
    return { locator: abs as SpillLocator, bytes: facts.bytes, retrievalHint: LOCAL_RETRIEVAL_HINT, sha256: facts.sha256, lines: facts.lines };
  }

  private resolvedRoot: string | undefined;

  private async realRoot(): Promise<string | undefined> {
    try {
      this.resolvedRoot = await fsp.realpath(this.root);
      return this.resolvedRoot;
    } catch {
      return undefined;
    }
  }

  /** Segments from the root down to the session folder, or a SpillError. */
  private segmentsFor(owner: SpillOwner): string[] {
    const dir = path.resolve(this.layout.dirFor(owner));
    const rel = path.relative(this.root, dir);
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new SpillError('EOUTSIDE', `layout folder ${dir} is outside the root ${this.root}`);
    return rel === '' ? [] : rel.split(path.sep);
  }

  /** Create (0700) and check every folder from the root down; no symlink accepted below the root. */
  private async ensureSessionDir(owner: SpillOwner): Promise<string> {
    const segments = this.segmentsFor(owner);
    await fsp.mkdir(this.root, { recursive: true, mode: 0o700 });
    const realRoot = await fsp.realpath(this.root);
    this.resolvedRoot = realRoot;
    let cur = realRoot;
    for (const seg of segments) {
      cur = path.join(cur, seg);
      try {
        await fsp.mkdir(cur, { mode: 0o700 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const st = await fsp.lstat(cur);
      if (st.isSymbolicLink()) throw new SpillError('ELOOP', `refusing a symlink in place of a spill folder: ${cur}`);
      if (!st.isDirectory()) throw new SpillError('ENOTDIR', `not a folder: ${cur}`);
    }
    const st = await fsp.lstat(cur);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
      throw new SpillError('EPERM', `spill folder belongs to another user: ${cur}`);
    }
    if (process.platform !== 'win32' && (st.mode & 0o022) !== 0) throw new SpillError('EPERM', `spill folder is writable by others: ${cur}`);
    return cur;
  }

  /** The session folder when it already exists as a real folder (lookups never create). */
  private async existingSessionDir(owner: SpillOwner): Promise<string | undefined> {
    const realRoot = await this.realRoot();
    if (!realRoot) return undefined;
    let cur = realRoot;
    for (const seg of this.segmentsFor(owner)) {
      cur = path.join(cur, seg);
      const st = await fsp.lstat(cur).catch(() => undefined);
      if (!st?.isDirectory()) return undefined;
    }
    return cur;
  }

  private async append(dir: string, record: ManifestRecord): Promise<void> {
    try {
      await appendManifest(dir, record);
    } catch (err) {
      this.logger?.warn(`spillway: manifest append failed in ${dir}: ${(err as Error).message}`);
    }
  }

  private isInside(file: string, base: string): boolean {
    const rel = path.relative(base, file);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  }

  private assertInside(file: string, base: string): void {
    if (!this.isInside(file, base)) throw new SpillError('EOUTSIDE', `path escapes the spill root: ${file}`);
  }
}

/** Exclusive create, owner-only, never through a symlink; a partial file is removed. */
/**
 * Exclusive create, then make sure the folder (checked before the open) was
 * not swapped for a symlink in between: the file must be exactly where meant.
 */
async function createExactly(file: string, data: Buffer): Promise<void> {
  await writeExclusive(file, data);
  if ((await fsp.realpath(file)) !== file) {
    await fsp.unlink(file).catch(() => undefined);
    throw new SpillError('ELOOP', `spill folder changed under us: ${path.dirname(file)}`);
  }
}

async function writeExclusive(file: string, data: Buffer): Promise<void> {
  const handle = await fsp.open(file, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(data);
    await handle.close();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fsp.unlink(file).catch(() => undefined);
    throw err;
  }
}

/** The manifest record of one save: who and what it was for, plus the file's facts. */
function manifestRecord(
  input: { owner: SpillOwner; source: SpillSource; args?: unknown; turn?: number },
  file: string,
  facts: { bytes: number; lines: number; sha256: string },
): ManifestRecord {
  return {
    v: MANIFEST_VERSION,
    file,
    tool: input.source.toolName,
    toolCallId: input.source.callId,
    ...(input.args !== undefined ? { args: input.args } : {}),
    bytes: facts.bytes,
    lines: facts.lines,
    sha256: facts.sha256,
    createdAt: new Date().toISOString(),
    sessionId: input.owner.sessionId,
    ...(input.turn !== undefined ? { turn: input.turn } : {}),
  };
}

/** sha256, byte and line counts of a file, streamed. */
export async function hashAndCount(file: string): Promise<{ sha256: string; bytes: number; lines: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  let newlines = 0;
  let last = -1;
  const handle = await fsp.open(file, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
      newlines += countNewlines(chunk);
      last = chunk[chunk.length - 1] ?? last;
    }
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), bytes, lines: lineCountFrom(newlines, bytes, last === 0x0a) };
}
