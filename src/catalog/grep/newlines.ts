// Counting '\n' for grep (line numbers need it for every byte before a
// match): a tiny WebAssembly SIMD module (16 bytes per step) when the runtime
// has wasm SIMD, else a 32-bit SWAR loop. Both exact; tests compare them with
// a bytewise loop.

/** Count '\n' in buffer[start, end). */
export function countNewlines(buffer: Buffer, start: number, end: number): number {
  const kernel = simdKernel();
  if (!kernel || end - start < 4096) return countNewlinesSwar(buffer, start, end);
  let count = 0;
  const window = new Uint8Array(kernel.memory.buffer, 0, KERNEL_WINDOW);
  for (let at = start; at < end; at += KERNEL_WINDOW) {
    const length = Math.min(KERNEL_WINDOW, end - at);
    window.set(buffer.subarray(at, at + length));
    count += kernel.count(0, length);
    // The kernel stops at a multiple of 16: the rest bytewise.
    for (let i = length & ~15; i < length; i++) if (window[i] === 0x0a) count++;
  }
  return count;
}

/**
 * SWAR over 32-bit words, two per step, per-byte counts summed in one
 * accumulator every 127 steps (each byte lane stays below 256); the unaligned
 * ends bytewise.
 */
export function countNewlinesSwar(buffer: Buffer, start: number, end: number): number {
  let count = 0;
  let i = start;
  while (i < end && (buffer.byteOffset + i) % 4 !== 0) if (buffer[i++] === 0x0a) count++;
  const words = Math.max(0, (end - i) >> 3) * 2;
  if (words > 0) {
    const view = new Int32Array(buffer.buffer, buffer.byteOffset + i, words);
    let w = 0;
    while (w < words) {
      const stop = Math.min(words, w + 254);
      let acc = 0;
      for (; w < stop; w += 2) {
        const x = view[w]! ^ 0x0a0a0a0a;
        const y = view[w + 1]! ^ 0x0a0a0a0a;
        // High bit of each byte that was '\n' (exact: no carry crosses a byte).
        acc += ((~(((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x) & 0x80808080) >>> 7) + ((~(((y & 0x7f7f7f7f) + 0x7f7f7f7f) | y) & 0x80808080) >>> 7);
      }
      count += (acc & 0xff) + ((acc >>> 8) & 0xff) + ((acc >>> 16) & 0xff) + (acc >>> 24);
    }
    i += words * 4;
  }
  while (i < end) if (buffer[i++] === 0x0a) count++;
  return count;
}

/** Bytes copied into the kernel's memory per call (its memory has 17 pages of 64 KiB). */
const KERNEL_WINDOW = 1 << 20;

interface Kernel {
  memory: WebAssembly.Memory;
  count: (ptr: number, length: number) => number;
}

let kernel: Kernel | null | undefined;

/** The SIMD kernel, or null when this runtime cannot run it. */
export function simdKernel(): Kernel | null {
  if (kernel !== undefined) return kernel;
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(kernelBytes()));
    const exports = instance.exports as Record<string, unknown>;
    kernel = { memory: exports.mem as WebAssembly.Memory, count: exports.count as Kernel['count'] };
  } catch {
    kernel = null;
  }
  return kernel;
}

/**
 * The module, assembled here (no toolchain): `count(ptr, len)` returns the
 * number of 0x0a bytes in memory[ptr, ptr + (len & ~15)). Per 16-byte vector,
 * i8x16.eq against '\n' gives -1 per hit, subtracted into byte lanes for up
 * to 255 vectors, then the lanes are widened and summed.
 */
function kernelBytes(): Uint8Array<ArrayBuffer> {
  const simd = (op: number, ...rest: number[]): number[] => [0xfd, op, ...rest];
  const [getPtr, getLen, getEnd, getTotal, getBlockEnd, getAcc] = [0, 1, 2, 3, 4, 5].map((i) => [0x20, i]);
  const set = (i: number): number[] => [0x21, i];
  const tee = (i: number): number[] => [0x22, i];
  const body = [
    // locals: 3 x i32 (end, total, blockEnd), 1 x v128 (acc)
    0x02, 0x03, 0x7f, 0x01, 0x7b,
    // end = ptr + (len & -16)
    ...getPtr!, ...getLen!, 0x41, 0x70, 0x71, 0x6a, ...set(2),
    0x02, 0x40, // block
    0x03, 0x40, //   loop (outer)
    ...getPtr!, ...getEnd!, 0x4f, 0x0d, 0x01, // if ptr >= end: break out of block
    // blockEnd = min(ptr + 255 * 16, end)
    ...getPtr!, 0x41, 0xf0, 0x1f, 0x6a, ...tee(4), ...getEnd!, ...getBlockEnd!, ...getEnd!, 0x49, 0x1b, ...set(4),
    ...simd(0x0c, ...new Array(16).fill(0)), ...set(5), // acc = 0
    0x03, 0x40, //     loop (inner)
    ...getAcc!, ...getPtr!, ...simd(0x00, 0x00, 0x00), 0x41, 0x0a, ...simd(0x0f), ...simd(0x23), ...simd(0x71), ...set(5),
    ...getPtr!, 0x41, 0x10, 0x6a, ...tee(0), ...getBlockEnd!, 0x49, 0x0d, 0x00, // ptr += 16; continue while ptr < blockEnd
    0x0b, //     end inner
    ...getAcc!, ...simd(0x7d), ...simd(0x7f), ...set(5), // widen: u8 lanes -> u16 -> u32
    ...getTotal!,
    ...getAcc!, ...simd(0x1b, 0), 0x6a,
    ...getAcc!, ...simd(0x1b, 1), 0x6a,
    ...getAcc!, ...simd(0x1b, 2), 0x6a,
    ...getAcc!, ...simd(0x1b, 3), 0x6a,
    ...set(3),
    0x0c, 0x00, //   continue outer
    0x0b, //   end loop
    0x0b, // end block
    ...getTotal!,
    0x0b, // end function
  ];
  const section = (id: number, content: number[]): number[] => [id, ...leb(content.length), ...content];
  const name = (text: string): number[] => [text.length, ...Array.from(text, (c) => c.charCodeAt(0))];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]), // type (i32, i32) -> i32
    ...section(3, [0x01, 0x00]), // one function of that type
    ...section(5, [0x01, 0x00, 0x11]), // memory: 17 pages, no maximum
    ...section(7, [0x02, ...name('mem'), 0x02, 0x00, ...name('count'), 0x00, 0x00]),
    ...section(10, [0x01, ...leb(body.length), ...body]),
  ]);
}

function leb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}
