// The digest of a stream (no file may be written): the same planner as digestText, answered from a head, a
// tail ring and a scan that saw the middle once; any way the bytes are cut into chunks gives the same digest.
import { describe, expect, it } from 'vitest';
import { STREAM_RESERVE_SIZE, digestText, type DigestOptions } from '../../../src/spill/digest';
import { DigestStream } from '../../../src/spill/digest-stream';

const OPTS: DigestOptions = { budgetBytes: 2048, toolName: 'Bash', locator: '', notKept: 'Its whole output could not be kept.' };

function build(lines: number, failAt: number): string {
  const out: string[] = [];
  for (let i = 1; i <= lines; i++) out.push(i === failAt ? 'error: the linker failed on unit 77' : `[${i}] compiling unit ${i % 97} ok`);
  return `${out.join('\n')}\n`;
}

function streamed(text: string, chunkSizes: number[], whole = 4096): ReturnType<DigestStream['end']> {
  const s = new DigestStream(OPTS, whole);
  const buf = Buffer.from(text);
  for (let at = 0, i = 0; at < buf.length; i++) {
    const n = chunkSizes[i % chunkSizes.length]!;
    s.push(buf.subarray(at, at + n));
    at += n;
  }
  return s.end();
}

describe('DigestStream', () => {
  it('gives a small output back byte for byte', () => {
    const bytes = Buffer.from([0x00, 0xff, 0x0a, 0x41, 0xe2, 0x97]);
    const s = new DigestStream(OPTS, 4096);
    s.push(bytes.subarray(0, 3));
    s.push(bytes.subarray(3));
    expect(s.end()).toEqual({ whole: bytes });
    expect(streamed('x'.repeat(4096), [1000])).toEqual({ whole: Buffer.from('x'.repeat(4096)) });
  });

  it.each([[[1]], [[7, 13]], [[4096]], [[65536]], [[1 << 20]]])('digests a large output as digestText does, in chunks of %j', (sizes) => {
    const text = build(20_000, 12_345);
    const got = streamed(text, sizes);
    const want = digestText(text, OPTS, STREAM_RESERVE_SIZE);
    expect(got).toEqual({ digest: want });
    const digest = (got as { digest: string }).digest;
    expect(digest).toContain('[line 12345] error: the linker failed on unit 77');
    expect(digest.startsWith('[1] compiling')).toBe(true);
    expect(digest.endsWith('[20000] compiling unit 18 ok\n')).toBe(true);
    expect(digest).toContain('Its whole output could not be kept.');
    expect(Buffer.byteLength(digest)).toBeLessThanOrEqual(2048);
  });

  it('is the same digest without salience, and for an output just over the whole size', () => {
    const noSalience = { ...OPTS, salience: false };
    const text = build(3000, 1500);
    const s = new DigestStream(noSalience, 4096);
    s.push(Buffer.from(text));
    expect(s.end()).toEqual({ digest: digestText(text, noSalience, STREAM_RESERVE_SIZE) });
    const justOver = 'y'.repeat(4000) + '\nerror: z\n' + 'w'.repeat(200);
    expect(streamed(justOver, [333])).toEqual({ digest: digestText(justOver, OPTS, STREAM_RESERVE_SIZE) });
  });

  it('holds a bounded amount of memory over 100 MB', () => {
    const s = new DigestStream(OPTS, 4096);
    const line = Buffer.from('[n] compiling a unit that is fine, nothing to see here, ok\n');
    const chunk = Buffer.concat(Array.from({ length: Math.ceil((1 << 20) / line.length) }, () => line));
    const before = process.memoryUsage().arrayBuffers;
    let peak = 0;
    const total = 100;
    for (let i = 0; i < total; i++) {
      if (i === 50) s.push(Buffer.from('error: the one failure in the middle\n'));
      s.push(chunk);
      if (i % 10 === 0) peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
    }
    const got = s.end() as { digest: string };
    expect(got.digest).toContain('error: the one failure in the middle');
    expect(got.digest).toMatch(/\[line [\d,]+\] error: the one failure in the middle/);
    // Far below the 100 MB that went through (the chunk given in is the caller's).
    expect(peak).toBeLessThan(16 << 20);
  });
});
