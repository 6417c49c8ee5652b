// The digest of an output that arrives as a stream and cannot be kept (no file
// may be written): one pass that holds the head, a tail ring and the failure
// lines found in between with their line numbers, so memory stays bounded
// whatever the size. At the end the digest is planned by the same planner as
// `digestText`/`digestFile` (digest.ts), answered from what was kept; only the
// notice's numbers are reserved for any size, since the size is known last.

import { type Answer, type DigestOptions, type Request, STREAM_RESERVE_SIZE, digestWindows, planDigest, scanStart } from './digest';
import { LineScanner } from './line-scanner';
import { countNewlines, decodeWithin } from './text';

export type StreamDigest = { whole: Buffer } | { digest: string };

export class DigestStream {
  private readonly headSize: number;
  private readonly tailSize: number;
  private readonly scanning: boolean;
  /** Every byte while the stream is still small enough to be shown whole. */
  private small: Buffer[] | undefined = [];
  private readonly headParts: Buffer[] = [];
  private headBytes = 0;
  private head: Buffer | undefined;
  /** The bytes after the head, at most `tailSize` of them once trimmed: the latest. */
  private ring: Buffer[] = [];
  private ringBytes = 0;
  /** Offset of the ring's first byte, and the byte just before it (the planner asks whether a line ends there). */
  private ringStart = 0;
  private beforeRing: number | undefined;
  private scanner: LineScanner | undefined;
  private scanFrom: { start: number; lineNo: number } | undefined;
  private size = 0;
  private newlines = 0;

  /** `wholeBytes`: an output of at most this many bytes comes back whole (at least the digest's budget). */
  constructor(
    private readonly opts: DigestOptions,
    private readonly wholeBytes: number,
  ) {
    const w = digestWindows(opts, STREAM_RESERVE_SIZE);
    this.headSize = w.full.head;
    this.tailSize = w.full.tail;
    this.scanning = w.maxSalience > 0;
    this.wholeBytes = Math.max(wholeBytes, Math.floor(opts.budgetBytes));
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.size += chunk.length;
    this.newlines += countNewlines(chunk);
    if (this.small) {
      // Copied: a reader may hand the same buffer again.
      this.small.push(Buffer.from(chunk));
      if (this.size > this.wholeBytes) this.small = undefined;
    }
    let rest = chunk;
    if (!this.head) {
      const take = rest.subarray(0, this.headSize - this.headBytes);
      this.headParts.push(Buffer.from(take));
      this.headBytes += take.length;
      rest = rest.subarray(take.length);
      if (this.headBytes < this.headSize) return;
      this.head = Buffer.concat(this.headParts, this.headBytes);
      this.ringStart = this.headBytes;
      this.beforeRing = this.head[this.head.length - 1];
      if (this.scanning) {
        this.scanFrom = scanStart(this.head, digestWindows(this.opts, STREAM_RESERVE_SIZE), this.opts);
        this.scanner = new LineScanner(this.scanFrom.start, this.scanFrom.lineNo);
        this.scanner.feed(this.head.subarray(this.scanFrom.start));
      }
    }
    if (rest.length === 0) return;
    if (rest.length >= this.tailSize) {
      // The ring is all replaced: what goes before the new tail is scanned in place, only the tail is copied.
      for (const part of this.ring) this.toScan(part);
      this.ring = [];
      this.ringBytes = 0;
      this.toScan(rest.subarray(0, rest.length - this.tailSize));
      rest = rest.subarray(rest.length - this.tailSize);
    }
    this.ring.push(Buffer.from(rest));
    this.ringBytes += rest.length;
    this.trim();
  }

  /** Moves the ring's bytes beyond its last `tailSize` to the scan. */
  private trim(): void {
    let over = this.ringBytes - this.tailSize;
    while (over > 0) {
      const first = this.ring[0]!;
      const out = first.length <= over ? first : first.subarray(0, over);
      this.ring[0] = first.subarray(out.length);
      if (this.ring[0].length === 0) this.ring.shift();
      this.ringBytes -= out.length;
      over -= out.length;
      this.toScan(out);
    }
  }

  /** Bytes leaving the window of the tail, in order: to the scan. */
  private toScan(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.scanner?.feed(bytes);
    this.beforeRing = bytes[bytes.length - 1];
    this.ringStart += bytes.length;
  }

  /** The output whole when it is small enough, else its digest. */
  end(): StreamDigest {
    if (this.small) return { whole: Buffer.concat(this.small, this.size) };
    if (this.size <= this.opts.budgetBytes || !this.head) throw new Error('digest stream: bytes went missing');
    const head = this.head;
    const tail = Buffer.concat(this.ring, this.ringBytes);
    const read = (start: number, end: number): Buffer => {
      if (end <= head.length) return head.subarray(start, end);
      if (start >= this.ringStart) return tail.subarray(start - this.ringStart, end - this.ringStart);
      if (start === this.ringStart - 1 && end === this.ringStart && this.beforeRing !== undefined) return Buffer.from([this.beforeRing]);
      throw new Error(`digest stream: bytes ${start}-${end} were not kept`);
    };
    const plan = planDigest(this.size, this.opts, STREAM_RESERVE_SIZE);
    let step = plan.next();
    while (!step.done) {
      const r: Request = step.value;
      let answer: Answer;
      if (r.op === 'read') answer = read(r.start, r.end);
      else if (r.op === 'count') {
        if (r.start > head.length || r.end < this.ringStart) throw new Error('digest stream: count outside what was kept');
        answer = this.newlines - countNewlines(head, 0, r.start) - countNewlines(tail, r.end - this.ringStart, tail.length);
      } else {
        const scanner = this.scanner;
        if (!scanner || this.scanFrom?.start !== r.start || this.scanFrom.lineNo !== r.lineNo || r.end < this.ringStart) {
          throw new Error('digest stream: the scan does not match the plan');
        }
        scanner.feed(tail.subarray(0, r.end - this.ringStart));
        scanner.finish();
        answer = scanner;
      }
      step = plan.next(answer);
    }
    return { digest: step.value };
  }

  /** What is still held (for a failure report): the head and the latest bytes, decoded. */
  kept(): { head: string; tail: string; size: number } {
    if (this.small) return { head: decodeWithin(Buffer.concat(this.small)), tail: '', size: this.size };
    return { head: decodeWithin(this.head ?? Buffer.concat(this.headParts)), tail: decodeWithin(Buffer.concat(this.ring)), size: this.size };
  }
}
