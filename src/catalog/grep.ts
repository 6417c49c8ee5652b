// Search blobs: ripgrep when one is found, else a streaming Node search that
// yields the same matches (same line numbers, same clipped text).
import { spawn } from 'node:child_process';
import { accessSync, constants as C, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { GrepMatch, GrepOptions, GrepProgress, GrepSummary } from './types';

const CHUNK = 1 << 20;
/** A "line" longer than this is cut (only binary-like files have them). */
const MAX_LINE_BYTES = 64 << 20;
/** Bytes of file-name arguments given to one rg process. */
const RG_ARGS_BYTES = 96 * 1024;

type Resolved = Required<Pick<GrepOptions, 'pattern' | 'regex' | 'ignoreCase' | 'maxResults' | 'maxLineChars'>> & { paths: string[] };

/** Clip a line the same way for both engines. */
export function clipLine(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) + '…' : text;
}

/** The ripgrep binary to use: `explicit` when it is executable, else `rg` on PATH. */
export function findRipgrep(explicit?: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = explicit ? [explicit] : (env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, process.platform === 'win32' ? 'rg.exe' : 'rg'));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, C.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}

/** Validate a pattern the way both engines will read it; throws a clear error. */
export function compilePattern(options: Pick<GrepOptions, 'pattern' | 'regex' | 'ignoreCase'>): RegExp {
  if (!options.pattern) throw new Error('empty pattern');
  if (options.pattern.includes('\n')) throw new Error('a pattern cannot contain a newline (matches are per line)');
  const source = options.regex ? options.pattern : options.pattern.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const flags = options.ignoreCase ? 'i' : '';
  try {
    return new RegExp(source, flags + 'u');
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (err) {
      throw new Error(`invalid regular expression: ${(err as Error).message}`);
    }
  }
}

/** Search `options.paths` (required here); streams each match to onMatch. */
export async function grep(
  options: GrepOptions & { paths: string[] },
  onMatch: (match: GrepMatch) => void,
  signal?: AbortSignal,
  onProgress?: (progress: GrepProgress) => void,
): Promise<GrepSummary> {
  const lineRegex = compilePattern(options);
  const resolved: Resolved = {
    pattern: options.pattern,
    regex: options.regex ?? false,
    ignoreCase: options.ignoreCase ?? false,
    maxResults: options.maxResults ?? 1000,
    maxLineChars: options.maxLineChars ?? 300,
    paths: options.paths,
  };
  const engine = options.engine ?? 'auto';
  const rg = engine === 'node' ? undefined : findRipgrep(options.rgPath);
  if (engine === 'rg' && !rg) throw new Error(options.rgPath ? `ripgrep not executable at ${options.rgPath}` : 'ripgrep (rg) not found on PATH');
  const sizes = await Promise.all(resolved.paths.map((p) => fsp.stat(p).then((s) => s.size, () => 0)));
  const progress: GrepProgress = { filesDone: 0, filesTotal: resolved.paths.length, bytesDone: 0, bytesTotal: sizes.reduce((a, b) => a + b, 0), matches: 0 };
  const summary: GrepSummary = { matches: 0, truncated: false, cancelled: false, engine: rg ? 'rg' : 'node', errors: [] };
  const emit = (match: GrepMatch): boolean => {
    if (summary.matches >= resolved.maxResults) {
      summary.truncated = true;
      return false;
    }
    summary.matches++;
    progress.matches = summary.matches;
    onMatch(match);
    return true;
  };
  if (rg) await runRipgrep(rg, resolved, sizes, emit, summary, progress, signal, onProgress);
  else await runNode(resolved, lineRegex, sizes, emit, summary, progress, signal, onProgress);
  if (signal?.aborted) summary.cancelled = true;
  onProgress?.({ ...progress });
  return summary;
}

// ---- Node engine ------------------------------------------------------

async function runNode(
  options: Resolved,
  lineRegex: RegExp,
  sizes: number[],
  emit: (m: GrepMatch) => boolean,
  summary: GrepSummary,
  progress: GrepProgress,
  signal: AbortSignal | undefined,
  onProgress: ((p: GrepProgress) => void) | undefined,
): Promise<void> {
  // Case-sensitive literals are found on raw bytes; everything else on decoded text.
  const needle = !options.regex && !options.ignoreCase ? Buffer.from(options.pattern, 'utf8') : undefined;
  const scanRegex = new RegExp(lineRegex.source, lineRegex.flags + 'gm');
  for (let f = 0; f < options.paths.length; f++) {
    if (signal?.aborted || summary.truncated) return;
    const file = options.paths[f]!;
    try {
      await searchFile(file, needle, scanRegex, lineRegex, options.maxLineChars, emit, signal);
    } catch (err) {
      summary.errors.push({ path: file, message: (err as Error).message });
    }
    progress.filesDone++;
    progress.bytesDone += sizes[f] ?? 0;
    onProgress?.({ ...progress });
  }
}

/** Counts '\n' lazily: only when a match needs its line number. */
class LineCounter {
  private offset = 0;
  private line = 1;
  constructor(private readonly handle: fsp.FileHandle) {}

  /** Line number of the byte at `target`; `chunk` holds file bytes from `chunkStart`. */
  async lineAt(target: number, chunk: Buffer, chunkStart: number): Promise<number> {
    if (this.offset < chunkStart) {
      // The gap lies in chunks already searched without a match: re-read it (page cache).
      const buffer = Buffer.allocUnsafe(CHUNK);
      while (this.offset < chunkStart) {
        const { bytesRead } = await this.handle.read(buffer, 0, Math.min(CHUNK, chunkStart - this.offset), this.offset);
        if (bytesRead === 0) break;
        this.line += countNewlines(buffer, 0, bytesRead);
        this.offset += bytesRead;
      }
    }
    this.line += countNewlines(chunk, this.offset - chunkStart, target - chunkStart);
    this.offset = target;
    return this.line;
  }
}

/** Count '\n' bytes in buffer[start, end): four bytes at a time (SWAR), the ends bytewise. */
export function countNewlines(buffer: Buffer, start: number, end: number): number {
  let count = 0;
  let i = start;
  while (i < end && (buffer.byteOffset + i) % 4 !== 0) if (buffer[i++] === 0x0a) count++;
  const words = Math.max(0, (end - i) >> 2);
  if (words > 0) {
    const view = new Uint32Array(buffer.buffer, buffer.byteOffset + i, words);
    for (let w = 0; w < words; w++) {
      const x = view[w]! ^ 0x0a0a0a0a;
      // High bit set in each byte of x that is zero (exact, no carries across bytes).
      let t = ~((((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x)) & 0x80808080;
      if (t !== 0) {
        t >>>= 7;
        count += (Math.imul(t, 0x01010101) >>> 24);
      }
    }
    i += words << 2;
  }
  while (i < end) if (buffer[i++] === 0x0a) count++;
  return count;
}

async function searchFile(
  file: string,
  needle: Buffer | undefined,
  scanRegex: RegExp,
  lineRegex: RegExp,
  maxLineChars: number,
  emit: (m: GrepMatch) => boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  const handle = await fsp.open(file, 'r');
  try {
    const counter = new LineCounter(handle);
    // One buffer: the unsearched tail of the previous read is moved to its
    // front and the next chunk read after it (no per-chunk allocation).
    let buffer = Buffer.allocUnsafe(CHUNK * 2);
    let carry = 0;
    let regionStart = 0; // file offset of buffer[0]
    let pos = 0;
    for (;;) {
      if (signal?.aborted) return;
      if (carry + CHUNK > buffer.length) {
        const grown = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(grown, 0, 0, carry);
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, carry, CHUNK, pos);
      const eof = bytesRead === 0;
      pos += bytesRead;
      const length = carry + bytesRead;
      // Search only complete lines; the tail waits for the next chunk (or EOF).
      let end = eof ? length : buffer.lastIndexOf(0x0a, length - 1) + 1;
      if (length === 0) end = 0;
      if (end === 0 && length > MAX_LINE_BYTES) end = length;
      if (end > 0) {
        const lines = buffer.subarray(0, end);
        const goOn = needle
          ? await searchBytes(lines, regionStart, needle, lineRegex, maxLineChars, counter, file, emit)
          : await searchText(lines, regionStart, scanRegex, lineRegex, maxLineChars, counter, file, emit);
        if (!goOn) return;
      }
      if (eof) return;
      buffer.copyWithin(0, end, length);
      carry = length - end;
      regionStart += end;
    }
  } finally {
    await handle.close();
  }
}

function lineText(lines: Buffer, start: number, end: number): string {
  return lines.toString('utf8', start, end);
}

async function searchBytes(
  lines: Buffer,
  base: number,
  needle: Buffer,
  lineRegex: RegExp,
  maxLineChars: number,
  counter: LineCounter,
  file: string,
  emit: (m: GrepMatch) => boolean,
): Promise<boolean> {
  let from = 0;
  for (;;) {
    const hit = lines.indexOf(needle, from);
    if (hit === -1) return true;
    const start = hit === 0 ? 0 : lines.lastIndexOf(0x0a, hit - 1) + 1;
    let end = lines.indexOf(0x0a, hit);
    if (end === -1) end = lines.length;
    const text = lineText(lines, start, end);
    // Bytes and decoded text agree for valid UTF-8; re-check so invalid bytes behave like rg's text view.
    if (lineRegex.test(text)) {
      const line = await counter.lineAt(base + start, lines, base);
      if (!emit({ path: file, line, text: clipLine(text, maxLineChars) })) return false;
    }
    from = end + 1;
  }
}

async function searchText(
  lines: Buffer,
  base: number,
  scanRegex: RegExp,
  lineRegex: RegExp,
  maxLineChars: number,
  counter: LineCounter,
  file: string,
  emit: (m: GrepMatch) => boolean,
): Promise<boolean> {
  const text = lines.toString('utf8');
  let strPos = 0;
  let bytePos = 0;
  scanRegex.lastIndex = 0;
  for (;;) {
    const m = scanRegex.exec(text);
    if (!m) return true;
    const start = m.index === 0 ? 0 : text.lastIndexOf('\n', m.index - 1) + 1;
    let end = text.indexOf('\n', m.index);
    if (end === -1) end = text.length;
    const line = text.slice(start, end);
    // The scan regex runs over many lines at once; the verdict is per line.
    if (lineRegex.test(line)) {
      bytePos += Buffer.byteLength(text.slice(strPos, start));
      strPos = start;
      const number = await counter.lineAt(base + bytePos, lines, base);
      if (!emit({ path: file, line: number, text: clipLine(line, maxLineChars) })) return false;
    }
    if (end >= text.length) return true;
    scanRegex.lastIndex = end + 1;
  }
}

// ---- ripgrep engine ---------------------------------------------------

async function runRipgrep(
  rg: string,
  options: Resolved,
  sizes: number[],
  emit: (m: GrepMatch) => boolean,
  summary: GrepSummary,
  progress: GrepProgress,
  signal: AbortSignal | undefined,
  onProgress: ((p: GrepProgress) => void) | undefined,
): Promise<void> {
  const sizeOf = new Map(options.paths.map((p, i) => [p, sizes[i] ?? 0]));
  const base = ['--json', '--no-config', '--text', '--no-ignore', '--hidden', '--line-number'];
  if (!options.regex) base.push('--fixed-strings');
  if (options.ignoreCase) base.push('--ignore-case');
  base.push('-e', options.pattern, '--');
  let batch: string[] = [];
  let batchBytes = 0;
  const batches: string[][] = [];
  for (const p of options.paths) {
    if (batchBytes + p.length > RG_ARGS_BYTES && batch.length > 0) {
      batches.push(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push(p);
    batchBytes += p.length + 1;
  }
  if (batch.length > 0) batches.push(batch);
  for (const files of batches) {
    if (signal?.aborted || summary.truncated) return;
    await new Promise<void>((resolve, reject) => {
      const child = spawn(rg, [...base, ...files], { stdio: ['ignore', 'pipe', 'pipe'] });
      const seen = new Set<string>();
      let stopped = false;
      const stop = (): void => {
        stopped = true;
        child.kill();
      };
      signal?.addEventListener('abort', stop, { once: true });
      let pending = '';
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.stdout.setEncoding('utf8').on('data', (data: string) => {
        if (stopped) return;
        pending += data;
        let nl = pending.indexOf('\n');
        while (nl !== -1 && !stopped) {
          const raw = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          nl = pending.indexOf('\n');
          let message: RgMessage;
          try {
            message = JSON.parse(raw) as RgMessage;
          } catch {
            continue;
          }
          if (message.type === 'end') {
            const file = rgText(message.data.path);
            seen.add(file);
            progress.filesDone++;
            progress.bytesDone += sizeOf.get(file) ?? 0;
            onProgress?.({ ...progress });
          } else if (message.type === 'match') {
            let text = rgText(message.data.lines);
            if (text.endsWith('\n')) text = text.slice(0, -1);
            const ok = emit({ path: rgText(message.data.path), line: message.data.line_number, text: clipLine(text, options.maxLineChars) });
            if (!ok) stop();
          }
        }
      });
      child.on('error', reject);
      child.on('close', (code) => {
        signal?.removeEventListener('abort', stop);
        // Files rg printed nothing for: no match (exit 1) or unreadable (reported on stderr).
        for (const file of files) {
          if (seen.has(file)) continue;
          progress.filesDone++;
          progress.bytesDone += sizeOf.get(file) ?? 0;
        }
        if (code === 2 && !stopped) {
          for (const file of files) {
            if (!seen.has(file) && stderr.includes(file)) summary.errors.push({ path: file, message: 'unreadable' });
          }
          if (summary.errors.length === 0 && stderr.trim()) {
            reject(new Error(`ripgrep: ${stderr.trim().split('\n')[0]}`));
            return;
          }
        }
        resolve();
      });
    });
  }
}

interface RgData {
  text?: string;
  bytes?: string;
}

type RgMessage =
  | { type: 'begin' | 'context' | 'summary'; data: never }
  | { type: 'end'; data: { path: RgData } }
  | { type: 'match'; data: { path: RgData; lines: RgData; line_number: number } };

function rgText(value: RgData): string {
  if (value.text !== undefined) return value.text;
  return Buffer.from(value.bytes ?? '', 'base64').toString('utf8');
}
