// Lines of a byte stream (a child's output, a file read in chunks), each
// byte scanned for '\n' once however the stream is cut.

/** Splits a byte stream into lines; the chunks pushed must not be reused by the caller (parts of them are kept). */
export class LineReader {
  private parts: Buffer[] = [];
  private partBytes = 0;
  private overlong = false;

  constructor(
    /** A longer line is dropped whole (never held). */
    private readonly maxLineBytes: number,
    private readonly onLine: (line: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    let nl = chunk.indexOf(0x0a);
    while (nl !== -1) {
      if (this.overlong) this.overlong = false;
      else if (this.partBytes === 0) this.onLine(chunk.subarray(start, nl));
      else this.onLine(Buffer.concat([...this.parts, chunk.subarray(start, nl)]));
      this.parts = [];
      this.partBytes = 0;
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    if (start < chunk.length && !this.overlong) {
      this.parts.push(chunk.subarray(start));
      this.partBytes += chunk.length - start;
      if (this.partBytes > this.maxLineBytes) {
        this.overlong = true;
        this.parts = [];
        this.partBytes = 0;
      }
    }
  }

  end(): void {
    if (this.partBytes > 0 && !this.overlong) this.onLine(Buffer.concat(this.parts));
    this.parts = [];
    this.partBytes = 0;
  }
}
