// Output in pieces: each piece's bytes are used again only once standard output says it took them whole;
// bytes it still holds (a pipe whose reader is behind) are never written over by the next piece.
import { describe, expect, it } from 'vitest';
import { Pieces } from '../../../src/cli/format';
import { noInput, type CliIO } from '../../../src/cli/io';

/** Rows of mixed width and script (some take three bytes a character), then one part longer than any piece. */
const parts = [
  ...Array.from({ length: 5000 }, (_, i) => `${i} ${'é'.repeat(i % 7)}${'€'.repeat(i % 5)} ${'x'.repeat((i * 37) % 300)}\n`),
  `a last part longer than a piece: ${'ü'.repeat(200_000)}\n`,
];

/** Writes `parts` through Pieces to a standard output that answers `taken`; what each write handed over, and the memory it lay in. */
function write(taken: boolean): { held: Uint8Array[]; atWrite: string[]; memory: Set<ArrayBufferLike> } {
  const held: Uint8Array[] = [];
  const atWrite: string[] = [];
  const memory = new Set<ArrayBufferLike>();
  const stdout = (text: string | Uint8Array): boolean => {
    const bytes = text as Uint8Array;
    held.push(bytes); // kept as handed over, as a stream that queues it does
    atWrite.push(Buffer.from(bytes).toString('utf8'));
    memory.add(bytes.buffer);
    return taken;
  };
  const io: CliIO = { stdout, stderr: () => undefined, stdin: noInput, env: {} };
  const pieces = new Pieces(io);
  for (const part of parts) pieces.add(part);
  pieces.flush();
  return { held, atWrite, memory };
}

describe('Pieces', () => {
  it('never writes over a piece standard output still holds', () => {
    const { held, atWrite, memory } = write(false);
    expect(Buffer.concat(held).toString('utf8')).toBe(parts.join(''));
    expect(atWrite.join('')).toBe(parts.join(''));
    expect(memory.size).toBe(held.length);
    // A piece per 64 K characters or so, not one per part.
    expect(held.length).toBeGreaterThan(5);
    expect(held.length).toBeLessThan(40);
  });

  it('uses the same memory again once standard output took a piece whole', () => {
    const { held, atWrite, memory } = write(true);
    expect(atWrite.join('')).toBe(parts.join(''));
    // One piece's memory for the rows, one made for the part too long for it.
    expect(memory.size).toBe(2);
    expect(held.length).toBeGreaterThan(5);
  });
});

describe('Pieces.addAllSplit', () => {
  it('splits a part longer than a piece across pieces of 64 K characters, never inside a surrogate pair, waiting after each', async () => {
    const written: Buffer[] = [];
    let waits = 0;
    const io: CliIO = { stdout: (text) => void written.push(Buffer.from(text as Uint8Array)), stderr: () => undefined, stdin: noInput, env: {}, caughtUp: async () => void waits++ };
    const pieces = new Pieces(io);
    // Pairs at both parities (a slice's end falls inside one of them), then plain text and a short part.
    const long = ['x', '😀'.repeat(100_000), 'y'.repeat(70_000), '😀'.repeat(50_001)];
    await pieces.addAllSplit([...long, 'end\n']);
    pieces.flush();
    const text = long.join('') + 'end\n';
    expect(Buffer.concat(written).toString('utf8')).toBe(text);
    for (const piece of written) {
      expect(piece.toString('utf8')).not.toContain('\uFFFD'); // each piece decodes alone: no half pair
      expect(piece.toString('utf8').length).toBeLessThanOrEqual(64 * 1024 + 1);
    }
    expect(waits).toBe(Math.floor(text.length / (64 * 1024)));
  });
});
