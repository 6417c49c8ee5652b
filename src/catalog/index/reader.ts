// Reading an index: its claims and listings at once, each session's line when asked.

import { closeSync, fstatSync } from 'node:fs';
import { pauser } from '../shared/pause';
import { type SessionClaim } from '../sources/source';
import { IndexedClaim } from './claims';
import { markUsed } from './files';
import { IndexLines } from './lines';
import { storedPaths } from './path-table';
import { absoluteFolders, EMPTY_INDEX, isCurrentFormat, lastLineSpan, LineSpans, listingsOf, LoadedIndex, openIndexFile, ReadTrailer, readTrailer, readTrailerHead, StoredListing, WalkHeader } from './trailer';

/**
 * An index file opened for reading: its claims and listings at once, each
 * session's line when asked. The file stays open: a newer index renamed
 * over it meanwhile does not change what is read.
 */
export class IndexReader extends IndexLines {
  /** Whether the trailer records each session's last update. */
  private readonly ordered: boolean;

  private constructor(
    private readonly file: string,
    fd: number,
    trailer: ReadTrailer,
    private header: WalkHeader | undefined,
  ) {
    super(fd);
    let offset = 0;
    const { updated } = trailer;
    this.ordered = Array.isArray(updated) && updated.length === trailer.lengths.length && updated.every((n) => typeof n === 'number' && Number.isFinite(n));
    // Element by element: push(...lengths) overflows the call's arguments past some 130,000 sessions.
    trailer.lengths.forEach((length, i) => {
      this.offsets.push(offset);
      this.lengths.push(length);
      this.lineClaims.push(trailer.claims[i]!);
      this.lineUpdated.push(this.ordered ? updated![i]! : 0);
      offset += length;
    });
  }

  /** Line numbers, the most recently updated session first; undefined when the trailer does not record updates (an older index). */
  newestFirst(): number[] | undefined {
    if (!this.ordered) return undefined;
    return this.lineUpdated.map((_, i) => i).sort((a, b) => this.lineUpdated[b]! - this.lineUpdated[a]! || a - b);
  }

  /** The claims, in the order of their lines. */
  get claims(): readonly SessionClaim[] {
    return this.lineClaims;
  }

  /** Each claim's line, by the claim's key. */
  linesByKey(keyOf: (claim: SessionClaim) => string): Map<string, number> {
    return new Map(this.lineClaims.map((claim, i) => [keyOf(claim), i]));
  }

  /** Undefined when the file is missing, unreadable, corrupt or of another version (it is then rebuilt). */
  static open(file: string): IndexReader | undefined {
    let fd: number | undefined;
    try {
      const opened = openIndexFile(file);
      fd = opened.fd;
      const found = readTrailer(fd);
      if (!found) throw new Error('not an index');
      const { trailer } = found;
      const reader = new IndexReader(file, fd, trailer, listingsOf(trailer));
      markUsed(fd, opened.stat);
      fd = undefined;
      return reader;
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /**
   * The last walk's listings, handed over once (then empty here): a scan needs them only for its walk, and
   * the reader would otherwise hold them until closed. (The blob folders are
   * for grep, which reads them alone: blobFoldersIn.)
   */
  takeHeader(): WalkHeader {
    const header = this.header ?? { listings: new Map(), walkedAt: 0 };
    this.header = undefined;
    return header;
  }

  /**
   * The blob folders an index file's trailer names (absolute paths only), read without the rest of it (a
   * fraction of what open() takes): where blobs were when it was saved, for ripgrep
   * to start on. Empty when the file is missing, corrupt or of another version.
   */
  static blobFoldersIn(file: string): string[] {
    let fd: number | undefined;
    try {
      fd = openIndexFile(file).fd;
      const span = lastLineSpan(fd);
      const head = span && readTrailerHead(fd, span);
      const paths = head && isCurrentFormat(head) ? storedPaths(head.paths) : undefined;
      return paths ? absoluteFolders(head!.blobFolders, paths) : [];
    } catch {
      return [];
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Where each entry line lies in which file (path, device, inode): enough for another thread to read the same lines. */
  lineSpans(): LineSpans {
    const { dev, ino } = fstatSync(this.fd);
    return { file: this.file, dev, ino, offsets: this.offsets, lengths: this.lengths };
  }

  /** Entry lines. */
  get size(): number {
    return this.claims.length;
  }

  /** Entry `i`'s line as stored (with its '\n'), in a buffer of its own. */
  line(i: number): Buffer {
    return Buffer.from(this.read(i));
  }

  /** Every entry in file order (but those `skip` names, not read), read ahead; stops (returns false) at a malformed one. */
  async forEach(visit: (entry: IndexedClaim) => void, skip?: ReadonlySet<number>): Promise<boolean> {
    // The extension host reads it too: other work gets a turn every few ms.
    const pause = pauser();
    for (let i = 0; i < this.size; i++) {
      if (skip?.has(i)) continue;
      const entry = this.entry(i, true);
      if (!entry) return false;
      visit(entry);
      const turn = pause();
      if (turn) await turn;
    }
    return true;
  }

  close(): void {
    closeSync(this.fd);
  }
}
/**
 * The stored sessions (by key) and listings; empty when the file is missing,
 * corrupt or of another version. With `first`, the `first.count` most
 * recently updated sessions (fallback ones excepted: they yield blobs to the
 * others) are read first and handed to `first.show`, then the rest: the top
 * of a tree can be shown before the whole index is read.
 */
export async function loadIndex(
  file: string,
  keyOf: (claim: SessionClaim) => string,
  first?: { count: number; show: (entries: IndexedClaim[]) => void },
): Promise<LoadedIndex> {
  const reader = IndexReader.open(file);
  if (!reader) return EMPTY_INDEX();
  try {
    const entries = new Map<string, IndexedClaim>();
    const early = new Set<number>();
    // A small index is read at once.
    const newest = first && reader.size > first.count ? reader.newestFirst() : undefined;
    if (first && newest) {
      const shown: IndexedClaim[] = [];
      for (const line of newest) {
        if (shown.length >= first.count) break;
        if (reader.claims[line]!.fallback) continue;
        const entry = reader.entry(line);
        if (!entry) return EMPTY_INDEX();
        early.add(line);
        shown.push(entry);
        entries.set(keyOf(entry.claim), entry);
      }
      first.show(shown);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // A torn or foreign file is not trusted at all: one bad line and it is rebuilt.
    if (!(await reader.forEach((entry) => entries.set(keyOf(entry.claim), entry), early))) return EMPTY_INDEX();
    const { listings, walkedAt } = reader.takeHeader();
    return { entries, claims: reader.claims, listings: listings as Map<string, StoredListing>, walkedAt, lines: { spans: reader.lineSpans(), at: reader.linesByKey(keyOf) } };
  } finally {
    reader.close();
  }
}