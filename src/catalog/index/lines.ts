// An index file's entry lines, each read alone by its span.

import { readSync } from 'node:fs';
import { type SessionClaim } from '../sources/source';
import { CheckedClaim, IndexedClaim } from './claims';
import { parseChecked, parseEntry, partOf, sameStampsAndBlobs } from './line-codec';
import { type SessionJson } from './session-json';

const READ_AHEAD_BYTES = 64 << 10;
/**
 * A listed part this short is kept from the check's read rather than read again when listed: a read costs some
 * 10 µs, a kilobyte of fresh memory some 3 (a page fault each 4 KB; docs/catalog.md, "Page faults").
 */
const KEPT_LISTED_BYTES = 3 << 10;
/** Kept listed parts are copied into slabs of this size (not a buffer each). */
const SLAB_BYTES = 1 << 20;

/** The entry lines of an index file open at `fd`, each read alone (for the reader and for the writer reading back what it wrote). */
export abstract class IndexLines {
  /** Each line's claim, start and length in bytes (its '\n' included), in file order. */
  protected readonly lineClaims: SessionClaim[] = [];
  protected readonly offsets: number[] = [];
  protected readonly lengths: number[] = [];
  protected readonly lineUpdated: number[] = [];
  /** The last read, and where in the file it began and how far it reached (a pass in file order reads ahead). */
  private ahead = Buffer.allocUnsafe(0);
  private aheadFrom = 0;
  private aheadBytes = 0;
  /** Where the line a pass read last ends: only the line right after it is worth reading ahead from. */
  private passAt = -1;
  /** Where each line's listed part begins within it, once a read of the whole line found it (listed() then reads only that part). */
  private readonly listedFrom: number[] = [];
  /** Listed parts kept as checking read them (see checked()), by line. */
  private readonly keptListed: Array<Buffer | undefined> = [];
  private slab = Buffer.allocUnsafe(0);
  private slabUsed = 0;
  /** Bytes read from the file (for tests that prove what a pass reads). */
  bytesRead = 0;

  protected constructor(protected readonly fd: number) {}

  /**
   * What entry `i` keeps for checking it (see CheckedClaim and entry()). With `keepListed` (the listing will be
   * printed), a short listed part is kept from this read, for listed() to print without reading it again.
   */
  checked(i: number, inOrder = false, keepListed = false): CheckedClaim | undefined {
    try {
      const line = this.read(i, inOrder);
      const listed = partOf(line, 2);
      if (listed) this.listedFrom[i] = listed.start;
      if (listed && keepListed && line.length - listed.start <= KEPT_LISTED_BYTES) this.keptListed[i] = this.keep(line.subarray(listed.start));
      return parseChecked(line, this.lineClaims[i]!);
    } catch {
      return undefined;
    }
  }

  /**
   * Entry `i`; undefined when its line is malformed or cannot be read (it is then described again). `inOrder`:
   * one of a pass through the lines in file order, which reads ahead (one read per 64 KB, not one per line).
   */
  entry(i: number, inOrder = false): IndexedClaim | undefined {
    try {
      return parseEntry(this.read(i, inOrder), this.lineClaims[i]!);
    } catch {
      return undefined;
    }
  }

  /**
   * Entry `i`'s session as `list --json` prints it, kept at the end of its line; undefined when the line keeps
   * none (a session without blobs) or cannot be read.
   */
  listed(i: number): SessionJson | undefined {
    try {
      // The part alone where checking the line found where it begins: about half of each line is not read again.
      const from = this.listedFrom[i];
      const kept = this.keptListed[i];
      const line = kept ?? (from === undefined ? this.read(i) : this.readTail(i, from));
      const part = from === undefined ? partOf(line, 2) : line[line.length - 1] === 0x0a ? { start: 0, end: line.length - 1 } : undefined;
      if (!part) return undefined;
      const [fields, ...blobs] = line.toString('utf8', part.start, part.end).split('\t');
      return { fields: JSON.parse(fields!) as SessionJson['fields'], blobs };
    } catch {
      return undefined;
    }
  }

  /**
   * Entry `i` when its description names the stamps and blobs its checked part does (the scan checked that part;
   * the description is what is printed and cleaned); null when they differ (an edited line), undefined when unreadable.
   */
  entryAsChecked(i: number): IndexedClaim | null | undefined {
    try {
      const line = this.read(i);
      const entry = parseEntry(line, this.lineClaims[i]!);
      const checked = parseChecked(line, this.lineClaims[i]!);
      if (!entry || !checked) return undefined;
      return sameStampsAndBlobs(checked, entry) ? entry : null;
    } catch {
      return undefined;
    }
  }

  /** A copy of `part` in the current slab (a new one when it is full). */
  private keep(part: Buffer): Buffer {
    if (this.slabUsed + part.length > this.slab.length) {
      this.slab = Buffer.allocUnsafe(SLAB_BYTES);
      this.slabUsed = 0;
    }
    const kept = this.slab.subarray(this.slabUsed, this.slabUsed + part.length);
    part.copy(kept);
    this.slabUsed += part.length;
    return kept;
  }

  /** Entry `i`'s line from byte `from` of it to its end, in a buffer reused by a later read. */
  private readTail(i: number, from: number): Buffer {
    const length = this.lengths[i]! - from;
    if (this.ahead.length < length) this.ahead = Buffer.allocUnsafe(Math.max(length, READ_AHEAD_BYTES));
    this.aheadBytes = 0;
    this.passAt = -1;
    const read = readSync(this.fd, this.ahead, 0, length, this.offsets[i]! + from);
    this.bytesRead += read;
    if (read < length) throw new Error('the index was cut short');
    return this.ahead.subarray(0, length);
  }

  /** Entry `i`'s line, in a buffer reused by a later read. */
  protected read(i: number, inOrder = false): Buffer {
    const length = this.lengths[i]!;
    const offset = this.offsets[i]!;
    if (inOrder && offset >= this.aheadFrom && offset + length <= this.aheadFrom + this.aheadBytes) {
      this.passAt = offset + length;
      return this.ahead.subarray(offset - this.aheadFrom, offset - this.aheadFrom + length);
    }
    // Ahead only where the pass goes on in file order: lines settled in another order (a scan's walk need not follow
    // the file) would each read 64 KB for one line of a few KB.
    const ahead = inOrder && offset === this.passAt;
    this.passAt = inOrder ? offset + length : -1;
    const size = ahead ? Math.max(length, READ_AHEAD_BYTES) : length;
    if (this.ahead.length < size) this.ahead = Buffer.allocUnsafe(Math.max(size, READ_AHEAD_BYTES));
    const read = readSync(this.fd, this.ahead, 0, size, offset);
    this.bytesRead += read;
    if (read < length) throw new Error('the index was cut short');
    // What was read ahead serves only the same pass: another read may come from a later state of the file.
    this.aheadFrom = offset;
    this.aheadBytes = ahead ? read : 0;
    return this.ahead.subarray(0, length);
  }
}