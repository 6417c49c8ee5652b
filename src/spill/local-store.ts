// The local SpillStore: private, session-scoped blob files on this machine.
//
// Safety rules (each one has a test): folders are created 0700; the session
// folder is opened once, step by step from the root, each step refused when it
// is a symlink, and everything after acts through that opened folder (a folder
// swapped for a symlink mid-spill cannot redirect anything: anchored-dir.ts);
// the manifest is opened (a regular file with one link, or the spill fails and
// the original result stays) before the blob is written; a blob is written
// under a temp name (exclusive, 0600, O_NOFOLLOW), synced and renamed into
// place, so a killed spill leaves no truncated blob; names are one sanitized
// path segment.

import { randomBytes } from 'node:crypto';
import { constants as C, promises as fsp, type Stats } from 'node:fs';
import * as path from 'node:path';
import { AnchoredDir, openBelow, withDir } from './anchored-dir';
import { defaultSpillRoot } from './default-root';
import { isBelow, isInside } from './inside';
import { LOCK_PREFIX, tempName } from './internal-files';
import { openManifestForAppend, readManifestFrom, type ManifestAppender, type ManifestRecord } from './manifest';
import { notPrivate } from './private-folder';
import { refusedKind } from './regular-file';
import { testPause } from './test-pause';
import { ContentTally, countLines, sha256Hex, TextCheck } from './text';
import { SpillError, type AliasSpill, type SaveTextSpill, type StagedSpill, type SpillLocator, type SpillLogger, type SpillOwner, type SpillRef, type SpillSource, type SpillStore } from './types';
import { BlobLayout, MAX_NAME_BYTES, PREFIX_HEX, sanitizeSegment, sessionHashLayout } from './blob-layout';
import { acquireLock } from './content-lock';
import { hashAndCount, manifestRecord } from './save-record';
import { dropTemp, placeTemp, reclaimStaleTemps, writeChunked, writeTemp } from './temp-files';
export { MAX_NAME_BYTES, sanitizeSegment, sessionHashLayout } from './blob-layout';
export type { BlobLayout } from './blob-layout';
export { boundedArgs, hashAndCount } from './save-record';

export { defaultSpillRoot };
export type { AliasSpill } from './types';

export interface LocalSpillStoreOptions {
  /** Store root; default `defaultSpillRoot()`. Every blob lies inside it. */
  root?: string;
  /** Folder per session; default `sessionHashLayout(root)`. */
  layout?: BlobLayout;
  logger?: SpillLogger;
  /** Random name prefix (hex); injectable so tests can aim at a name. */
  randomId?: () => string;
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

interface BlobFacts {
  bytes: number;
  lines: number;
  sha256: string;
}

/** A text written whole to a temp file in the root as it arrived (`stage`): where the local store keeps it. */
export interface StagedText extends StagedSpill {
  readonly root: AnchoredDir;
  readonly temp: string;
  readonly written: Stats;
}

/** Staging stopped after taking part of the output (a full disk): what was written, and the piece in hand, can still be read. */
export class StageError extends Error {
  constructor(
    override readonly cause: unknown,
    /** The temp holding the first `writtenBytes` bytes. */
    readonly tempPath: string,
    readonly writtenBytes: number,
    /** The piece being written when it failed (not counted in `writtenBytes`). */
    readonly pending: Buffer,
    /** Removes the temp: call it once the bytes were read back. */
    readonly release: () => Promise<void>,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
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

  /**
   * Writes the full text under a temp name, renames it into place, then
   * appends the manifest line (its failure is logged, the blob stays valid and
   * listed). A manifest that cannot be opened fails the save before the blob is in place (its temp removed).
   */
  async saveText(input: SaveTextSpill): Promise<SpillRef> {
    const data = Buffer.from(input.content, 'utf8');
    const root = await this.openRoot();
    const temp = tempName();
    try {
      const written = await writeTemp(root, temp, (handle) => writeChunked(handle, data));
      return await this.place(root, temp, written, input, { bytes: data.length, lines: countLines(data), sha256: sha256Hex(data) });
    } finally {
      await dropTemp(root, temp); // placed: gone already
    }
  }

  /**
   * Write an output (too big to hold in memory, or not all UTF-8) to a private temp file in the root
   * as it arrives, with its facts; then `saveStaged` or `discardStaged` it.
   * When writing fails once part of the output was taken, `StageError` says
   * how many bytes the temp holds and has the piece in hand, so the caller
   * can hand the whole output back.
   */
  async stage(chunks: AsyncIterator<Buffer>): Promise<StagedText> {
    const root = await this.openRoot();
    const temp = tempName();
    const tally = new ContentTally();
    const text = new TextCheck();
    /** A piece taken from `chunks` and not yet written whole. */
    let pending: Buffer | undefined;
    try {
      const written = await writeTemp(
        root,
        temp,
        async (handle) => {
          for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
            pending = next.value;
            await writeChunked(handle, pending);
            tally.add(pending);
            text.add(pending);
            pending = undefined;
          }
        },
        { keepOnError: true },
      );
      return { path: root.at(temp), root, temp, written, text: text.isText, ...tally.finish() };
    } catch (err) {
      const release = (): Promise<void> => dropTemp(root, temp);
      // Nothing taken yet: the caller still holds the whole output.
      if (tally.bytes === 0 && !pending?.length) {
        await release();
        throw err;
      }
      throw new StageError(err, root.at(temp), tally.bytes, pending ?? Buffer.alloc(0), release);
    }
  }

  /** A staged text saved as a blob of the session (as `saveText` would save it). */
  async saveStaged(staged: StagedText, input: Omit<SaveTextSpill, 'content'>): Promise<SpillRef> {
    return this.place(staged.root, staged.temp, staged.written, input, staged);
  }

  /** A staged text not kept: its temp removed (a no-op once saved). */
  async discardStaged(staged: StagedText): Promise<void> {
    await dropTemp(staged.root, staged.temp);
  }

  /**
   * A written temp moved into the session's folder under a fresh name, and recorded in its manifest. When
   * it cannot be, the temp is still there (the caller removes it, or prints a staged output back from it).
   */
  private async place(root: AnchoredDir, temp: string, written: Stats, input: Omit<SaveTextSpill, 'content'>, facts: BlobFacts): Promise<SpillRef> {
    const sessionId = input.owner?.sessionId;
    if (!sessionId) throw new SpillError('ENOSESSION', 'no session id: refusing to spill outside a session');
    const prefix = sanitizeSegment(this.randomId()).slice(0, 32);
    const name = `${prefix}-${sanitizeSegment(input.suggestedName, MAX_NAME_BYTES - prefix.length - 1)}`;
    // Temps go in the root, where no layout lists files and every spill into
    // the root looks for ones a killed spill left.
    return withDir(this.ensureSessionDir(input.owner, root), async (dir) => {
      const manifest = await openManifestForAppend(dir);
      try {
        await reclaimStaleTemps(root);
        await placeTemp(root, temp, written, dir, name);
        await testPause('before-manifest');
        await this.append(dir, manifest, manifestRecord(input, name, facts));
      } finally {
        await manifest.close().catch(() => undefined);
      }
      return { locator: path.join(dir.path, name) as SpillLocator, bytes: facts.bytes, retrievalHint: LOCAL_RETRIEVAL_HINT, sha256: facts.sha256, lines: facts.lines };
    });
  }

  /**
   * Run `fn` (look up, then alias or save) holding this session's lock for
   * `sha256`, so concurrent spills of one body write it once. The lock is a
   * file created exclusively; one left by a killed process (dead pid, or older
   * than a day) is broken. Waiting is bounded: after LOCK_WAIT_MS `fn` runs
   * anyway (a second copy costs space, never a result).
   */
  async withContentLock<T>(owner: SpillOwner, sha256: string, fn: () => Promise<T>): Promise<T> {
    const dir = await this.ensureSessionDir(owner);
    const lock = dir.at(`${LOCK_PREFIX}${sha256.slice(0, 32)}`);
    let held = false;
    try {
      held = await acquireLock(lock);
      return await fn();
    } finally {
      if (held) await fsp.unlink(lock).catch(() => undefined);
      await dir.close();
    }
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
    try {
      const root = (await this.realRoot()) ?? this.root;
      for (const r of await this.recordsWithSha(dir, sha256)) {
        const rel = r.aliasOf ?? r.file;
        const file = path.resolve(dir.path, rel);
        if (!isBelow(root, file)) continue;
        const st = await fsp.lstat(dir.relative(rel)).catch(() => undefined);
        if (!st?.isFile() || st.nlink > 1 || st.size !== r.bytes) continue;
        return { locator: file as SpillLocator, bytes: r.bytes, retrievalHint: LOCAL_RETRIEVAL_HINT, sha256, lines: r.lines };
      }
      return undefined;
    } finally {
      await dir.close();
    }
  }

  /** Per session folder: records by sha256, read incrementally (the manifest only grows). */
  private readonly shaIndex = new Map<string, { ino: number; offset: number; bySha: Map<string, ManifestRecord[]> }>();

  private async recordsWithSha(dir: AnchoredDir, sha256: string): Promise<ManifestRecord[]> {
    let entry = this.shaIndex.get(dir.path);
    let tail = await readManifestFrom(dir.self, entry?.offset ?? 0);
    if (entry && (tail.ino !== entry.ino || tail.offset < entry.offset)) {
      entry = undefined; // replaced or truncated: start over
      tail = await readManifestFrom(dir.self, 0);
    }
    if (!entry) {
      entry = { ino: tail.ino, offset: 0, bySha: new Map() };
      this.shaIndex.set(dir.path, entry);
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
    const sha256 = input.original.sha256;
    if (!sha256) throw new SpillError('EINVAL', 'alias needs the original sha256');
    await withDir(this.ensureSessionDir(input.owner), async (dir) => {
      const rel = path.relative(dir.path, input.original.locator);
      await this.appendOnce(dir, {
        ...manifestRecord(input, rel, { bytes: input.original.bytes, lines: input.original.lines ?? 0, sha256 }),
        aliasOf: rel,
      });
    });
    return input.original;
  }

  /**
   * An empty private file (0600, created exclusively, never through a
   * symlink, in the session's 0700 folder) that another process fills, e.g. a
   * shell capturing a command's output; recorded later with `recordExternal`.
   * Fails if the name is taken. Returns its path.
   */
  async createEmpty(owner: SpillOwner, name: string): Promise<string> {
    const safe = sanitizeSegment(name);
    return withDir(this.ensureSessionDir(owner), async (dir) => {
      const handle = await fsp.open(dir.at(safe), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
      const made = await handle.stat().finally(() => handle.close());
      // The shell will open it by path: that path must lead to this very file.
      const file = path.join(dir.path, safe);
      const named = await fsp.lstat(file).catch(() => undefined);
      if (named?.ino !== made.ino || named.dev !== made.dev) {
        await fsp.unlink(dir.at(safe)).catch(() => undefined);
        throw new SpillError('ELOOP', `spill folder moved while the file was created: ${dir.path}`);
      }
      return file;
    });
  }

  /** Record a blob the agent wrote itself; returns a ref to it. */
  async recordExternal(input: ExternalSpill): Promise<SpillRef> {
    if (path.isAbsolute(input.file)) throw new SpillError('EINVAL', `external file must be relative to the manifest folder: ${input.file}`);
    return withDir(this.ensureSessionDir(input.owner), (dir) => this.recordExternalIn(dir, input));
  }

  private async recordExternalIn(dir: AnchoredDir, input: ExternalSpill): Promise<SpillRef> {
    const abs = path.resolve(dir.path, input.file);
    const root = (await this.realRoot()) ?? this.root;
    this.assertInside(abs, root);
    const refused = refusedKind(await fsp.lstat(abs));
    if (refused) throw new SpillError('EINVAL', `not a regular file with one link (${refused}): ${abs}`);
    // A symlinked folder on the way must not lead out of the root either.
    this.assertInside(await fsp.realpath(abs), root);
    const facts =
      input.sha256 !== undefined && input.lines !== undefined && input.bytes !== undefined
        ? { sha256: input.sha256, lines: input.lines, bytes: input.bytes }
        : await hashAndCount(abs);
    await this.appendOnce(dir, manifestRecord(input, input.file.split(path.sep).join('/'), facts));
    return { locator: abs as SpillLocator, bytes: facts.bytes, retrievalHint: LOCAL_RETRIEVAL_HINT, sha256: facts.sha256, lines: facts.lines };
  }

  private async realRoot(): Promise<string | undefined> {
    return fsp.realpath(this.root).catch(() => undefined);
  }

  /** Segments from the root down to the session folder, or a SpillError. */
  private segmentsFor(owner: SpillOwner): string[] {
    const dir = path.resolve(this.layout.dirFor(owner));
    if (!isInside(this.root, dir)) throw new SpillError('EOUTSIDE', `layout folder ${dir} is outside the root ${this.root}`);
    const rel = path.relative(this.root, dir);
    return rel === '' ? [] : rel.split(path.sep);
  }

  /**
   * The session folder, opened step by step from the root: each step is
   * created 0700 when missing and refused when it is a symlink or not a
   * folder. It must be ours and not writable by others.
   */
  private async ensureSessionDir(owner: SpillOwner, root?: AnchoredDir): Promise<AnchoredDir> {
    const segments = this.segmentsFor(owner);
    const dir = root ? await root.descend(segments, { create: true }) : await openBelow(await this.ensureRoot(), segments, { create: true });
    const st = dir.stats;
    try {
      const why = notPrivate(st);
      if (why) throw new SpillError('EPERM', `spill folder ${why}: ${dir.path}`);
    } catch (err) {
      await dir.close();
      throw err;
    }
    return dir;
  }

  /** The root, created (0700) when missing. */
  private async ensureRoot(): Promise<string> {
    await fsp.mkdir(this.root, { recursive: true, mode: 0o700 });
    return this.root;
  }

  private async openRoot(): Promise<AnchoredDir> {
    return AnchoredDir.open(await this.ensureRoot());
  }

  /** The session folder when it already exists as a real folder (lookups never create). */
  private async existingSessionDir(owner: SpillOwner): Promise<AnchoredDir | undefined> {
    try {
      return await openBelow(this.root, this.segmentsFor(owner));
    } catch {
      return undefined;
    }
  }

  private async append(dir: AnchoredDir, manifest: ManifestAppender, record: ManifestRecord): Promise<void> {
    try {
      await testPause('manifest-append');
      await manifest.append(record);
    } catch (err) {
      this.logger?.warn(`manifest append failed in ${dir.path}: ${(err as Error).message}`);
    }
  }

  /** Open the manifest, append one record, close (a failure is logged). */
  private async appendOnce(dir: AnchoredDir, record: ManifestRecord): Promise<void> {
    let manifest: ManifestAppender;
    try {
      manifest = await openManifestForAppend(dir);
    } catch (err) {
      this.logger?.warn(`manifest append failed in ${dir.path}: ${(err as Error).message}`);
      return;
    }
    try {
      await this.append(dir, manifest, record);
    } finally {
      await manifest.close().catch(() => undefined);
    }
  }

  private assertInside(file: string, base: string): void {
    if (!isBelow(base, file)) throw new SpillError('EOUTSIDE', `path escapes the spill root: ${file}`);
  }
}

