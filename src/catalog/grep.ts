// Search blobs: ripgrep when one is found, else a streaming Node search that
// yields the same matches (same line numbers, same clipped text).
import { isAscii } from 'node:buffer';
import { spawn } from 'node:child_process';
import { accessSync, constants as C, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { countNewlines, lowerAsciiSimd } from './newlines';
import { openRegularFile, regularFileProblem } from '../spill/regular-file';
import type { GrepMatch, GrepOptions, GrepProgress, GrepSummary } from './types';

const CHUNK = 2 << 20;
const FILES_IN_FLIGHT = 4;
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
  const sizes = await Promise.all(resolved.paths.map((p) => fsp.lstat(p).then((s) => s.size, () => 0)));
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
  const run: GrepRun = { options: resolved, sizes, emit, summary, progress, signal, onProgress };
  if (rg) await runRipgrep(rg, run);
  else await runNode(run, lineRegex);
  if (signal?.aborted) summary.cancelled = true;
  onProgress?.({ ...progress });
  return summary;
}

// ---- Node engine ------------------------------------------------------

/** One search in progress, shared by both engines. */
interface GrepRun {
  options: Resolved;
  sizes: number[];
  /** Reports a match; false once the cap is reached. */
  emit: (m: GrepMatch) => boolean;
  summary: GrepSummary;
  progress: GrepProgress;
  signal: AbortSignal | undefined;
  onProgress: ((p: GrepProgress) => void) | undefined;
}

async function runNode(run: GrepRun, lineRegex: RegExp): Promise<void> {
  const { options, sizes, emit, summary, progress, signal, onProgress } = run;
  // Case-sensitive literals are found on raw bytes; case-insensitive ASCII
  // literals on an ASCII-lowered copy of ASCII chunks; everything else on text.
  // A regex is prefiltered by a literal every match must contain (as ripgrep
  // does); the per-line regex test keeps the verdict exact.
  const literal = options.regex ? requiredLiteral(options.pattern) : options.pattern;
  const needle = literal !== undefined && !options.ignoreCase ? Buffer.from(literal, 'utf8') : undefined;
  const folded = literal !== undefined && options.ignoreCase && /^[\x20-\x7e]+$/.test(literal) ? Buffer.from(literal.toLowerCase(), 'latin1') : undefined;
  const scanRegex = new RegExp(lineRegex.source, lineRegex.flags + 'gm');
  const matcher: Matcher = { needle, folded, scanRegex, lineRegex, maxLineChars: options.maxLineChars };
  // Four files in flight: their reads (in the thread pool) overlap the search
  // of the others on the main thread (measured best on 2 cores: bench/catalog-grep.mjs).
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.paths.length) {
      if (signal?.aborted || summary.truncated) return;
      const f = next++;
      const file = options.paths[f]!;
      try {
        await searchFile(file, matcher, emit, signal);
      } catch (err) {
        summary.errors.push({ path: file, message: (err as Error).message });
      }
      progress.filesDone++;
      progress.bytesDone += sizes[f] ?? 0;
      onProgress?.({ ...progress });
    }
  };
  await Promise.all(Array.from({ length: 3 }, () => worker()));
}

interface Matcher {
  needle?: Buffer;
  folded?: Buffer;
  scanRegex: RegExp;
  lineRegex: RegExp;
  maxLineChars: number;
}

const META = new Set([...'\\^$.|?*+()[]{}']);

/**
 * The longest run of plain characters every match of `source` must contain,
 * or undefined (alternation, or no run of 3+). Groups, classes, escapes like
 * \d and anything a quantifier may drop end a run.
 */
export function requiredLiteral(source: string): string | undefined {
  let best = '';
  let run = '';
  let depth = 0;
  const end = (): void => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const next = source[i + 1];
      i++;
      if (depth === 0 && next !== undefined && META.has(next) && !/[?*{]/.test(source[i + 1] ?? '')) run += next;
      else end();
      continue;
    }
    if (c === '[') {
      end();
      // Skip the class (a ']' first in it, or escaped, is literal).
      i++;
      if (source[i] === '^') i++;
      if (source[i] === ']') i++;
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
      continue;
    }
    if (c === '(') {
      end();
      depth++;
      continue;
    }
    if (c === ')') {
      depth--;
      continue;
    }
    if (c === '|') return undefined; // (at any depth: keep it simple and safe)
    if (c === '?' || c === '*' || c === '{') {
      run = run.slice(0, -1); // the previous char may be absent (or repeated)
      end();
      if (c === '{') while (i < source.length && source[i] !== '}') i++;
      continue;
    }
    if (c === '+') {
      end();
      continue;
    }
    if (depth > 0 || META.has(c)) {
      end();
      continue;
    }
    run += c;
  }
  end();
  return best.length >= 3 ? best : undefined;
}

/** Copy `src` to `dst` with A-Z lowered, four bytes at a time (bytes >= 0x80 untouched). */
export function lowerAscii(src: Buffer, dst: Buffer): void {
  src.copy(dst, 0, 0, src.length);
  const words = (dst.byteOffset % 4 === 0 ? src.length : 0) >> 2;
  if (words > 0) {
    const view = new Uint32Array(dst.buffer, dst.byteOffset, words);
    for (let i = 0; i < words; i++) {
      const w = view[i]!;
      const low7 = w & 0x7f7f7f7f;
      // High bit per byte: >= 'A' and not >= '[' and an ASCII byte to begin with.
      const upper = (low7 + 0x3f3f3f3f) & ~(low7 + 0x25252525) & ~w & 0x80808080;
      if (upper !== 0) view[i] = w | (upper >>> 2);
    }
  }
  for (let i = words << 2; i < src.length; i++) {
    const c = dst[i]!;
    if (c >= 0x41 && c <= 0x5a) dst[i] = c | 0x20;
  }
}

/** Counts '\n' lazily: only when a match needs its line number. */
class LineCounter {
  private offset = 0;
  private line = 1;
  /** Set once a match needed a line number: later chunks are counted while in memory (no re-read). */
  eager = false;

  /** Count the rest of an in-memory chunk (called after it was searched). */
  advance(chunk: Buffer, chunkStart: number): void {
    if (!this.eager || this.offset < chunkStart) return;
    this.line += countNewlines(chunk, this.offset - chunkStart, chunk.length);
    this.offset = chunkStart + chunk.length;
  }
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
    this.eager = true;
    return this.line;
  }
}

async function searchFile(file: string, matcher: Matcher, emit: (m: GrepMatch) => boolean, signal: AbortSignal | undefined): Promise<void> {
  const { needle, folded, scanRegex, lineRegex, maxLineChars } = matcher;
  let scratch: Buffer | undefined;
  const handle = await openRegularFile(file);
  try {
    const counter = new LineCounter(handle);
    const search: FileSearch = { file, counter, lineRegex, maxLineChars, emit };
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
        let goOn: boolean;
        if (needle) goOn = await searchBytes(lines, lines, regionStart, needle, search);
        else if (folded && isAscii(lines)) {
          if (!scratch || scratch.length < buffer.length) scratch = Buffer.allocUnsafe(buffer.length);
          const lowered = scratch.subarray(0, end);
          if (!lowerAsciiSimd(lines, lowered)) lowerAscii(lines, lowered);
          goOn = await searchBytes(lowered, lines, regionStart, folded, search);
        } else goOn = await searchText(lines, regionStart, scanRegex, search);
        if (!goOn) return;
        counter.advance(lines, regionStart);
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

/** One file being searched: where matches go and how their lines are numbered. */
interface FileSearch {
  file: string;
  counter: LineCounter;
  lineRegex: RegExp;
  maxLineChars: number;
  emit: (m: GrepMatch) => boolean;
}

/** Find `needle` in `haystack` (the lines, or a case-folded copy with the same offsets); report from `lines`. */
async function searchBytes(haystack: Buffer, lines: Buffer, base: number, needle: Buffer, search: FileSearch): Promise<boolean> {
  const { file, counter, lineRegex, maxLineChars, emit } = search;
  let from = 0;
  for (;;) {
    const hit = haystack.indexOf(needle, from);
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

async function searchText(lines: Buffer, base: number, scanRegex: RegExp, search: FileSearch): Promise<boolean> {
  const { file, counter, lineRegex, maxLineChars, emit } = search;
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

async function runRipgrep(rg: string, run: GrepRun): Promise<void> {
  const { options, sizes, emit, summary, progress, signal, onProgress } = run;
  const sizeOf = new Map(options.paths.map((p, i) => [p, sizes[i] ?? 0]));
  const base = ['--json', '--no-config', '--text', '--no-ignore', '--hidden', '--line-number'];
  if (!options.regex) base.push('--fixed-strings');
  if (options.ignoreCase) base.push('--ignore-case');
  base.push('-e', options.pattern, '--');
  // rg opens named files through symlinks and blocks on FIFOs: hand it regular files only.
  const problems = await Promise.all(options.paths.map((p) => regularFileProblem(p).catch(() => undefined)));
  const regular: string[] = [];
  options.paths.forEach((p, i) => {
    const problem = problems[i];
    if (!problem) regular.push(p);
    else {
      summary.errors.push({ path: p, message: problem.message });
      progress.filesDone++;
    }
  });
  let batch: string[] = [];
  let batchBytes = 0;
  const batches: string[][] = [];
  for (const p of regular) {
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
