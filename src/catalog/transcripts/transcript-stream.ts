// A transcript read from a stream of bytes (an object GET from a bucket):
// lines parsed as they arrive, never the whole transcript in memory and never
// on disk, with the skip rules of files (transcripts.ts): a line that is not
// JSON, not understood, over the longest parsed or torn at the end is skipped
// and counted.
import { MAX_LINE_BYTES, takeLine, type LineReducer, type LineTally } from './transcripts';

export interface StreamedTranscript<S> extends LineTally<S> {
  /** Bytes the stream gave. */
  size: number;
}

export async function readTranscriptStream<S>(chunks: AsyncIterable<Uint8Array>, reducer: LineReducer<S>, maxLineBytes = MAX_LINE_BYTES): Promise<StreamedTranscript<S>> {
  const tally: StreamedTranscript<S> = { state: reducer.init(), lines: 0, skipped: 0, size: 0 };
  // The start of a line begun in an earlier chunk; dropped (only its length kept) once it is too long to parse.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of chunks) {
    const chunk = Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    tally.size += chunk.length;
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const lineBytes = pendingBytes + (nl - start);
      if (lineBytes > maxLineBytes) {
        tally.lines++;
        tally.skipped++;
      } else if (pendingBytes === 0) {
        takeLine(tally, reducer, chunk, start, nl);
      } else {
        const line = Buffer.concat([...pending, chunk.subarray(start, nl)], lineBytes);
        takeLine(tally, reducer, line, 0, lineBytes);
      }
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      pendingBytes += chunk.length - start;
      // Copied: the stream may reuse its buffers.
      if (pendingBytes <= maxLineBytes) pending.push(Buffer.from(chunk.subarray(start)));
      else pending = [];
    }
  }
  // A last line without '\n' (a transcript cut short by its upload or still being written) is torn: skipped, as in a file.
  if (pendingBytes > 0) tally.skipped++;
  return tally;
}
