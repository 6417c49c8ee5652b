// Writing an index: line by line to a private temporary file, renamed into place when whole.

import { closeSync, constants as fsConstants, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { pauser } from '../shared/pause';
import { claimKey, type SessionClaim } from '../sources/source';
import { IndexedClaim } from './claims';
import { removeLeftovers } from './files';
import { encodeEntry, lastUpdate } from './line-codec';
import { IndexLines } from './lines';
import { PathTable } from './path-table';
import { checkIndexFolder, FORMAT, INDEX_VERSION, IndexHeader, StoredClaim, Trailer } from './trailer';

/** Writing the index failed (a full disk, a lost folder): the caller can still do without it. */
export class IndexWriteError extends Error {}

/** Lines are encoded into a buffer of this size, written when full. */
const FLUSH_BYTES = 256 << 10;
/** The UTF-16 code units of a string encoded at once: at 3 bytes each at most, they fit the buffer. */
const SLICE_UNITS = Math.floor(FLUSH_BYTES / 3);

/**
 * A new index, written to a private temporary file line by line (each
 * session as it is settled), then renamed over the old one by commit() (the
 * last complete one wins). Its lines can be read back while it is written.
 */
export class IndexWriter extends IndexLines {
  /**
   * Each line is encoded here as it is added, and the buffer written when full: a line held as a string until a
   * flush outlived V8's young generation (1 MB in the CLI), so it was copied, then promoted, then collected again.
   */
  private readonly out = Buffer.allocUnsafe(FLUSH_BYTES);
  private used = 0;
  private written = 0;

  private constructor(
    private readonly file: string,
    private readonly temp: string,
    fd: number,
  ) {
    super(fd);
  }

  static async open(file: string): Promise<IndexWriter> {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    checkIndexFolder(path.dirname(file));
    removeLeftovers(path.dirname(file));
    // Named as LEFTOVER_TEMP matches: the index's name, this process's id, a unique tail.
    const temp = `${file}.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}.tmp`;
    const fd = openSync(temp, fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600);
    return new IndexWriter(file, temp, fd);
  }

  /** Add a session's entry; returns its number. */
  add(entry: IndexedClaim): number {
    return this.addLine(entry.claim, encodeEntry(entry), lastUpdate(entry));
  }

  /** Add a line as another index stored it (with its '\n', and its session's last update); returns its number. */
  addLine(claim: SessionClaim, line: string | Buffer, updated: number): number {
    this.lineClaims.push(claim);
    this.lineUpdated.push(updated);
    this.offsets.push(this.written + this.used);
    this.lengths.push(this.append(line));
    return this.lineClaims.length - 1;
  }

  /** A line not yet written is written first (with all before it). */
  protected override read(i: number, inOrder?: boolean): Buffer {
    if (this.offsets[i]! + this.lengths[i]! > this.written) this.flush();
    return super.read(i, inOrder);
  }

  /** Write the trailer and rename the file into place (it stays open for reading; a failed rename leaves it readable, a failed write throws IndexWriteError). */
  async commit(header: IndexHeader): Promise<void> {
    // Each listing's claims by their lines here; one whose claim has none is left out (the folder is listed again).
    const lineOf = new Map(this.lineClaims.map((claim, i) => [claimKey(claim), i]));
    const table = new PathTable();
    const blobFolders = header.blobFolders.map((folder) => table.number(folder));
    const listings = [...header.listings].flatMap(([dir, l]): Trailer['listings'] => {
      const claims = l.claims.map((claim) => lineOf.get(claimKey(claim)));
      return claims.every((line) => line !== undefined) ? [[table.number(dir), l.stamp, claims, l.children.map((child) => table.number(child))]] : [];
    });
    const claims = this.lineClaims.map((claim): StoredClaim => ({ ...claim, dir: table.number(claim.dir), owns: claim.owns.map((owned) => table.number(owned)) }));
    // The paths and blob folders come before walkedAt and all the rest: grep reads them alone (readTrailerHead).
    const trailer: Trailer = { format: FORMAT, version: INDEX_VERSION, savedAt: new Date().toISOString(), paths: table.stored, blobFolders, walkedAt: header.walkedAt, listings, claims, lengths: this.lengths, updated: this.lineUpdated };
    // The same bytes as JSON.stringify(trailer), written a field at a time: whole, a big trailer was held three
    // times at once (the string, the joined text, the bytes).
    Object.entries(trailer).forEach(([name, value], i) => this.append(`${i === 0 ? '{' : ','}${JSON.stringify(name)}:${JSON.stringify(value)}`));
    this.append('}\n');
    this.flush();
    renameSync(this.temp, this.file);
  }

  /** Close; an uncommitted file is removed. */
  async close(): Promise<void> {
    closeSync(this.fd);
    try {
      unlinkSync(this.temp);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // renamed into place (committed)
    }
  }

  /** Encode `data` after what is buffered; returns its length in bytes. */
  private append(data: string | Buffer): number {
    if (typeof data !== 'string') {
      if (this.used + data.length > this.out.length) this.flush();
      if (data.length > this.out.length) this.write(data); // a line copied from the old index, of MBs
      else this.used += data.copy(this.out, this.used);
      return data.length;
    }
    // A string is encoded a slice at a time: a line of MBs or a trailer's
    // field is never held twice, as text and as its bytes. A slice never ends between the two halves of a surrogate
    // pair (each half alone would be encoded as U+FFFD).
    let bytes = 0;
    for (let at = 0; at < data.length; ) {
      let end = Math.min(data.length, at + SLICE_UNITS);
      if (end < data.length && isHighSurrogate(data.charCodeAt(end - 1))) end--;
      // A UTF-16 code unit is at most 3 bytes of UTF-8: room for that much, or the buffer is written first.
      if (this.used + (end - at) * 3 > this.out.length) this.flush();
      const n = this.out.write(at === 0 && end === data.length ? data : data.slice(at, end), this.used);
      this.used += n;
      bytes += n;
      at = end;
    }
    return bytes;
  }

  private flush(): void {
    if (this.used === 0) return;
    this.write(this.out.subarray(0, this.used));
    this.used = 0;
  }

  private write(data: Buffer): void {
    try {
      // At most FLUSH_BYTES a call: Linux throttles a process that dirties many pages in one write.
      for (let done = 0; done < data.length; ) done += writeSync(this.fd, data, done, Math.min(data.length - done, FLUSH_BYTES), this.written + done);
    } catch (err) {
      throw new IndexWriteError((err as Error).message);
    }
    this.written += data.length;
  }
}

/** The first half of a surrogate pair (U+D800-U+DBFF). */
function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
/** Write the index whole (a private temporary file renamed over the old one). */
export async function saveIndex(file: string, entries: Iterable<IndexedClaim>, extra: IndexHeader = { blobFolders: [], listings: new Map(), walkedAt: 0 }): Promise<void> {
  const writer = await IndexWriter.open(file);
  try {
    // The extension saves while it watches: encoding every line at once would hold its event loop.
    const pause = pauser();
    for (const entry of entries) {
      const turn = pause();
      if (turn) await turn;
      writer.add(entry);
    }
    await writer.commit(extra);
  } finally {
    await writer.close();
  }
}