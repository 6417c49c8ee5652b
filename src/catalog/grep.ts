// Search blobs: ripgrep when one is found, else a streaming Node search that
// yields the same matches (same line numbers, same clipped text).
import { isAscii } from 'node:buffer';
import { accessSync, closeSync, constants as C, promises as fsp, readSync } from 'node:fs';
import * as path from 'node:path';
import { Literal } from './literal';
import { countNewlines } from './newlines';
import { pauser } from './pause';
import { AS_NAMED, type ReadAnchor } from './rooted-read';
import { RegexRunner } from './regex-worker';
import { checkRipgrepSyntax, runRipgrep } from './grep-rg';
import type { GrepMatch, GrepOptions, GrepProgress, GrepSummary } from './types';

const CHUNK = 2 << 20;
/** A "line" longer than this is cut (only binary-like files have them). */
const MAX_LINE_BYTES = 64 << 20;

export type Resolved = Required<Pick<GrepOptions, 'pattern' | 'regex' | 'ignoreCase' | 'maxResults' | 'maxLineChars'>> & {
  paths: string[];
  /** 0: no per-blob cap. */
  maxPerBlob: number;
  regexTimeoutMs: number | undefined;
};

/**
 * What to search: files by name and, for ripgrep, whole folders whose every
 * regular file (but Spillway's manifests) is a blob. `accept` keeps a match
 * only when its file is one the caller knows (folders may gain other files).
 */
export interface GrepTargets {
  paths: string[];
  folders?: BlobFolder[];
  /** The blobs in those folders, searched by name by the Node engine (made only for it). */
  folderFiles?: () => string[];
  accept?: (file: string) => boolean;
  /** The size the caller knows for a file, for progress (else each file is stat'ed). */
  sizeOf?: (file: string) => number | undefined;
  /** How files and folders are reached (default: as named). */
  reads?: ReadAnchor;
}

/** A folder of blobs, with what it holds as far as the caller knows (for progress). */
export interface BlobFolder {
  path: string;
  /** A glob the blobs' names match: only files so named are read (a folder shared with other programs). */
  names?: string;
  files: number;
  bytes: number;
}

/** Blob folders, each with the glob its blobs' names match (undefined: every file but the manifests). */
export type BlobFolderNames = Map<string, string | undefined>;

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

/**
 * Smart case as ripgrep has it: case-insensitive unless the pattern holds an
 * uppercase letter (in a regex, escapes like `\W` or `\S` do not count).
 */
export function effectiveIgnoreCase(options: Pick<GrepOptions, 'pattern' | 'regex' | 'ignoreCase' | 'smartCase'>): boolean {
  if (options.ignoreCase) return true;
  if (!options.smartCase) return false;
  const letters = options.regex ? options.pattern.replace(/\\(?:[pP]\{[^}]*\}|.)/gu, '') : options.pattern;
  return !/\p{Lu}/u.test(letters);
}

/** Validate a pattern the way both engines will read it; throws a clear error. */
export function compilePattern(options: Pick<GrepOptions, 'pattern' | 'regex' | 'ignoreCase'>): RegExp {
  checkPatternShape(options.pattern);
  const flags = options.ignoreCase ? 'i' : '';
  if (!options.regex) return new RegExp(options.pattern.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), flags + 'u');
  try {
    return new RegExp(asRipgrep(options.pattern, true), flags + 'u');
  } catch {
    try {
      return new RegExp(asRipgrep(options.pattern, false), flags);
    } catch (err) {
      throw new Error(`invalid regular expression: ${(err as Error).message}`);
    }
  }
}

/** What no engine searches for: nothing, or more than one line. */
function checkPatternShape(pattern: string): void {
  if (!pattern) throw new Error('empty pattern');
  if (pattern.includes('\n')) throw new Error('a pattern cannot contain a newline (matches are per line)');
}

/** Ripgrep's word character (Rust regex's Unicode `\w`), as members of a JavaScript `u` class. */
const WORD = String.raw`\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}`;
/** Unicode's White_Space, ripgrep's `\s` (JavaScript's adds U+FEFF and leaves out U+0085), and its complement. */
const SPACE = String.raw`\p{White_Space}`;
const NOT_SPACE = String.raw`\P{White_Space}`;

/**
 * A regex as ripgrep reads it, in JavaScript: `.` is anything but '\n' (JavaScript's also refuses '\r',
 * a progress bar's line), and with `unicode` (the `u` flag) `\w`, `\d` and `\b` are Unicode's as in
 * Rust's regex (JavaScript's are ASCII: `^\w+$` missed `straße`). Other escapes and classes stay as they are.
 */
function asRipgrep(source: string, unicode: boolean): string {
  const outside: Record<string, string> = unicode
    ? { w: `[${WORD}]`, W: `[^${WORD}]`, s: SPACE, S: NOT_SPACE, d: String.raw`\p{Nd}`, D: String.raw`\P{Nd}`, b: `(?:(?<=[${WORD}])(?![${WORD}])|(?<![${WORD}])(?=[${WORD}]))`, B: `(?:(?<=[${WORD}])(?=[${WORD}])|(?<![${WORD}])(?![${WORD}]))` }
    : {};
  const inside: Record<string, string> = unicode ? { w: WORD, s: SPACE, S: NOT_SPACE, d: String.raw`\p{Nd}`, D: String.raw`\P{Nd}` } : {};
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      out += (inClass ? inside[next] : outside[next]) ?? c + next;
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else {
      if (c === '[') inClass = true;
      out += c === '.' ? '[^\\n]' : c;
    }
  }
  return out;
}

/**
 * Search `options.paths` (and `folders` with ripgrep); streams each match to onMatch. When onMatch returns
 * a promise (its reader is behind), the search pauses until it settles.
 */
export function grep(
  options: GrepOptions & GrepTargets,
  onMatch: (match: GrepMatch) => unknown,
  signal?: AbortSignal,
  onProgress?: (progress: GrepProgress) => void,
): Promise<GrepSummary> {
  return grepWhileLoading(options, () => ({ early: Promise.resolve([]), targets: Promise.resolve(options), reads: options.reads }), onMatch, signal, onProgress);
}

/** What to search, while it is still being found (see grepWhileLoading). */
export interface Loading {
  /** Folders that held blobs last time, for ripgrep to start on. */
  early: Promise<readonly string[]>;
  /**
   * Whether a file is a blob as far as can be told before `targets` (the
   * index's word, where it still holds): its matches are printed at once.
   */
  provisional?: Promise<((file: string) => boolean) | undefined>;
  targets: Promise<GrepTargets>;
  /** How files and folders are reached (default: as named). */
  reads?: ReadAnchor;
}

/**
 * Search targets still being found (a catalog scanning): `begin` starts
 * finding them once the options are valid (its flag: ripgrep will be used).
 * ripgrep starts at once on the `early` folders (where blobs were last
 * time); their matches are printed as soon as `provisional` vouches for
 * their file, else held until `targets` is known, then kept only in its blobs. What `targets` holds beyond them is searched afterwards. The
 * Node engine waits for `targets`.
 */
export async function grepWhileLoading(
  options: GrepOptions,
  begin: (withRipgrep: boolean) => Loading,
  onMatch: (match: GrepMatch) => unknown,
  signal?: AbortSignal,
  onProgress?: (progress: GrepProgress) => void,
): Promise<GrepSummary> {
  const ignoreCase = effectiveIgnoreCase(options);
  const maxPerBlob = options.maxPerBlob ?? 0;
  if (!Number.isInteger(maxPerBlob) || maxPerBlob < 0) throw new Error('maxPerBlob must be a whole number (0: no cap)');
  const engine = options.engine ?? 'auto';
  const rg = engine === 'node' ? undefined : findRipgrep(options.rgPath);
  if (engine === 'rg' && !rg) throw new Error(options.rgPath ? `ripgrep not executable at ${options.rgPath}` : 'ripgrep (rg) not found on PATH');
  // Checked before anything is read or scanned; ripgrep's syntax is its own (`(?i)`, `\z`, `[[:upper:]]`).
  checkPatternShape(options.pattern);
  const lineRegex = rg ? undefined : compilePattern({ ...options, ignoreCase });
  if (rg && options.regex) checkRipgrepSyntax(rg, options.pattern, () => compilePattern({ ...options, ignoreCase }));
  const resolved: Resolved = {
    pattern: options.pattern,
    regex: options.regex ?? false,
    ignoreCase,
    maxResults: options.maxResults ?? 1000,
    maxLineChars: options.maxLineChars ?? 300,
    paths: [],
    maxPerBlob,
    regexTimeoutMs: options.regexTimeoutMs,
  };
  const progress: GrepProgress = { filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0, matches: 0 };
  const summary: GrepSummary & { cappedBlobs: string[] } = { matches: 0, truncated: false, cancelled: false, engine: rg ? 'rg' : 'node', errors: [], cappedBlobs: [] };
  const perBlob = new Map<string, number>();
  /** What the reader of the matches asked to wait for (a slower reader of a pipe), until it settles. */
  let behind: Promise<void> | undefined;
  const emit = (match: GrepMatch): boolean => {
    if (summary.matches >= resolved.maxResults) {
      summary.truncated = true;
      return false;
    }
    if (maxPerBlob > 0) {
      const seen = perBlob.get(match.path) ?? 0;
      if (seen >= maxPerBlob) {
        if (seen === maxPerBlob) summary.cappedBlobs.push(match.path);
        perBlob.set(match.path, seen + 1);
        return true;
      }
      perBlob.set(match.path, seen + 1);
    }
    summary.matches++;
    progress.matches = summary.matches;
    const wait = onMatch(match);
    if (wait instanceof Promise && !behind) {
      const caughtUp = (): void => void (behind = undefined);
      behind = wait.then(caughtUp, caughtUp);
    }
    return true;
  };
  // Past the cap by one: that extra match is what says the blob was cut.
  const blobFull = (file: string): boolean => maxPerBlob > 0 && (perBlob.get(file) ?? 0) > maxPerBlob;
  const run: GrepRun = { options: resolved, sizes: [], emit, blobFull, readerBehind: () => behind, summary, progress, signal, reads: AS_NAMED, onProgress };

  const { early, provisional, targets, reads } = begin(!!rg);
  if (reads) run.reads = reads;
  // Awaited below; until then a failure must not count as unhandled.
  targets.catch(() => undefined);
  const started = rg ? await startEarly(rg, run, await early, targets, provisional) : undefined;
  const known = await targets;
  const folders = known.folders ?? [];
  // The Node engine reads files by name: the folders' blobs join the list.
  resolved.paths = rg || !known.folderFiles ? known.paths : [...known.paths, ...known.folderFiles()];
  const { sizeOf } = known;
  run.sizes = sizeOf ? resolved.paths.map((p) => sizeOf(p) ?? 0) : await Promise.all(resolved.paths.map((p) => fsp.lstat(p).then((s) => s.size, () => 0)));
  progress.filesTotal = resolved.paths.length + (rg ? sum(folders, (f) => f.files) : 0);
  progress.bytesTotal = sum(run.sizes, (n) => n) + (rg ? sum(folders, (f) => f.bytes) : 0);
  if (rg) {
    const searched = await (started?.done ?? Promise.resolve(new Set<string>()));
    const rest: BlobFolder[] = [];
    for (const folder of folders) {
      if (!searched.has(folder.path)) rest.push(folder);
      else {
        progress.filesDone += folder.files;
        progress.bytesDone += folder.bytes;
      }
    }
    if (!signal?.aborted && !summary.truncated) await runRipgrep(rg, run, { folders: rest, accept: known.accept });
  } else await runNode(run, lineRegex!);
  if (signal?.aborted) summary.cancelled = true;
  onProgress?.({ ...progress });
  return summary;
}

/**
 * Start ripgrep on the early folders that are real folders now; resolves to
 * the folders searched once it is done (its matches and errors held until
 * `targets` says which files are blobs).
 */
async function startEarly(
  rg: string,
  run: GrepRun,
  early: readonly string[],
  targets: Promise<GrepTargets>,
  provisional: Loading['provisional'],
): Promise<{ done: Promise<Set<string>> } | undefined> {
  if (early.length === 0) return undefined;
  let known: GrepTargets | undefined;
  let targetFolders = new Set<string>();
  const ready = targets.then((t) => {
    known = t;
    targetFolders = new Set((t.folders ?? []).map((f) => f.path));
  });
  let vouched: ((file: string) => boolean) | undefined;
  const judgeAgain = provisional?.then((f) => (vouched = f), () => undefined);
  // Each is opened below its root, never through a symlink; one gone or no
  // longer a folder is left out (quietly, unless the scan still lists it).
  const folders = early.map((f) => ({ path: f, files: 0, bytes: 0 }));
  const earlyRun: GrepRun = { ...run, options: { ...run.options, paths: [] }, sizes: [], onProgress: undefined };
  const done = runRipgrep(rg, earlyRun, {
    folders,
    ready,
    acceptNow: (file) => vouched?.(file) ?? false,
    judgeAgain,
    // Only folders still blob folders count as searched; only blobs' matches are kept.
    accept: (file) => targetFolders.has(path.dirname(file)) && (known?.accept?.(file) ?? true),
    keepError: (file) => targetFolders.has(file) || targetFolders.has(path.dirname(file)),
  }).then((searched) => new Set(searched.filter((f) => targetFolders.has(f))));
  // A failing scan is the caller's error (awaited there): the early search just stops.
  done.catch(() => undefined);
  return { done };
}

function sum<T>(items: readonly T[], of: (item: T) => number): number {
  let total = 0;
  for (const item of items) total += of(item);
  return total;
}

// ---- Node engine ------------------------------------------------------

/** One search in progress, shared by both engines. */
export interface GrepRun {
  options: Resolved;
  sizes: number[];
  /** Reports a match; false once the total cap is reached (a blob over its own cap is skipped, true). */
  emit: (m: GrepMatch) => boolean;
  /** The blob reached the per-blob cap: searching it further is wasted. */
  blobFull: (file: string) => boolean;
  /** Settles once the reader of the matches has caught up; undefined while it keeps up. */
  readerBehind: () => Promise<void> | undefined;
  summary: GrepSummary;
  progress: GrepProgress;
  signal: AbortSignal | undefined;
  /** How files and folders are reached. */
  reads: ReadAnchor;
  onProgress: ((p: GrepProgress) => void) | undefined;
}

async function runNode(run: GrepRun, lineRegex: RegExp): Promise<void> {
  const { options, sizes, summary, progress, signal, onProgress } = run;
  // Case-sensitive literals are found on raw bytes, case-insensitive ASCII
  // literals too in ASCII chunks (A-Z folded where the literal is compared);
  // everything else by the regex in a worker (bounded in time). A regex is
  // prefiltered by a literal every match must contain (as ripgrep does): lines
  // without it are skipped.
  const literal = options.regex ? requiredLiteral(options.pattern) : options.pattern;
  const needle = literal !== undefined && !options.ignoreCase ? new Literal(Buffer.from(literal, 'utf8')) : undefined;
  const folded = literal !== undefined && options.ignoreCase && /^[\x20-\x7e]+$/.test(literal) ? new Literal(Buffer.from(literal.toLowerCase(), 'latin1'), true) : undefined;
  // Only a case-sensitive literal never needs the regex (a folded one does on non-ASCII chunks).
  const bytesOnly = !options.regex && needle !== undefined;
  // Files are read synchronously into buffers each lane reuses: from the page
  // cache that is several times faster than the promise API (a thread-pool
  // round trip per open, stat, read and close). `pause` hands the event loop
  // its turn every few milliseconds (cancelling, progress, the regex workers).
  // Bytes alone need one lane; with the regex, three files in flight let the
  // reads and byte checks of two overlap the worker judging the third.
  const pause = pauser();
  let next = 0;
  const worker = async (): Promise<void> => {
    const runner = bytesOnly ? undefined : new RegexRunner(lineRegex, options.regexTimeoutMs);
    const matcher: Matcher = { needle, folded, literalOnly: !options.regex, runner, lineRegex, maxLineChars: options.maxLineChars };
    const lane: Lane = { buffer: Buffer.allocUnsafe(CHUNK * 2), pause };
    try {
      while (next < options.paths.length) {
        if (signal?.aborted || summary.truncated) return;
        const f = next++;
        const file = options.paths[f]!;
        try {
          await searchFile(file, matcher, run, lane);
        } catch (err) {
          summary.errors.push({ path: file, message: (err as Error).message });
        }
        progress.filesDone++;
        progress.bytesDone += sizes[f] ?? 0;
        onProgress?.({ ...progress });
      }
    } finally {
      await runner?.close();
    }
  };
  await Promise.all(Array.from({ length: bytesOnly ? 1 : 3 }, () => worker()));
}

/** Buffers reused from file to file by one lane of the Node engine. */
interface Lane {
  /** Grows for a long line (until that file is done). */
  buffer: Buffer;
  /** Where the line counter re-reads a gap. */
  gap?: Buffer;
  pause: () => Promise<void> | undefined;
}

interface Matcher {
  /** The literal (or a regex's required literal) as bytes, case-sensitive. */
  needle?: Literal;
  /** The same, lowered, for case-insensitive ASCII. */
  folded?: Literal;
  /** The pattern is a literal: where the bytes can be searched, they decide. */
  literalOnly: boolean;
  /** Judges lines by the regex (in a worker); unset when the byte search always decides. */
  runner?: RegexRunner;
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
      else {
        end();
        i = escapeEnd(source, i);
      }
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

/**
 * The last index of the escape whose letter is at `i` (`\x45`, `\u00ef`, `\u{1F600}`, `\pL`, `\p{Lu}`,
 * `\cJ`, `\k<name>`, `\12`): what follows the letter there is its argument, not literal text.
 */
function escapeEnd(source: string, i: number): number {
  const letter = source[i];
  const braced = (open: string, close: string): number => (source[i + 1] === open ? Math.max(i, source.indexOf(close, i + 1)) : -1);
  if (letter === 'x') return i + 2;
  if (letter === 'u') return braced('{', '}') >= 0 ? braced('{', '}') : i + 4;
  if (letter === 'p' || letter === 'P') return braced('{', '}') >= 0 ? braced('{', '}') : i + 1;
  if (letter === 'c') return i + 1;
  if (letter === 'k') return Math.max(i, braced('<', '>'));
  let j = i;
  while (/[0-9]/.test(source[j + 1] ?? '') && /[0-9]/.test(letter ?? '')) j++;
  return j;
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
  constructor(
    private readonly fd: number,
    private readonly lane: Lane,
  ) {}

  /** Line number of the byte at `target`; `chunk` holds file bytes from `chunkStart`. */
  lineAt(target: number, chunk: Buffer, chunkStart: number): number {
    if (this.offset < chunkStart) {
      // The gap lies in chunks already searched without a match: re-read it (page cache).
      const buffer = (this.lane.gap ??= Buffer.allocUnsafe(CHUNK));
      while (this.offset < chunkStart) {
        const bytesRead = readSync(this.fd, buffer, 0, Math.min(CHUNK, chunkStart - this.offset), this.offset);
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

async function searchFile(file: string, matcher: Matcher, run: GrepRun, lane: Lane): Promise<void> {
  const { needle, folded, literalOnly, runner, lineRegex, maxLineChars } = matcher;
  const { signal } = run;
  const { fd, size } = run.reads.openSync(file);
  try {
    const counter = new LineCounter(fd, lane);
    const search: FileSearch = { file, counter, lineRegex, maxLineChars, run };
    // The lane's buffer: the unsearched tail of the previous read is moved to
    // its front and the next chunk read after it (no per-chunk allocation).
    let carry = 0;
    let regionStart = 0; // file offset of buffer[0]
    let pos = 0;
    for (;;) {
      await lane.pause();
      await run.readerBehind();
      if (signal?.aborted) return;
      if (carry + CHUNK > lane.buffer.length) {
        const grown = Buffer.allocUnsafe(lane.buffer.length * 2);
        lane.buffer.copy(grown, 0, 0, carry);
        lane.buffer = grown;
      }
      const buffer = lane.buffer;
      let bytesRead = readSync(fd, buffer, carry, CHUNK, pos);
      // A UTF-8 byte-order mark is no text: ripgrep drops it before matching (`^ERROR` holds on line 1) and printing.
      if (pos === 0 && bytesRead >= 3 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf) {
        buffer.copyWithin(0, 3, bytesRead);
        bytesRead -= 3;
        pos = regionStart = 3;
      }
      // A NUL byte marks a binary file: searching stops as ripgrep's does on a folder, whose reads are
      // 64 KiB blocks: the lines that end before the block holding the NUL are searched, none after.
      const nul = buffer.subarray(carry, carry + bytesRead).indexOf(0);
      // Up to the size seen when opened (no read to find the end; an append since is not searched).
      const eof = bytesRead === 0 || pos + bytesRead >= size;
      pos += bytesRead;
      const length = nul === -1 ? carry + bytesRead : Math.max(0, binaryCutoff(regionStart + carry + nul) - regionStart);
      // Search only complete lines; the tail waits for the next chunk (or EOF).
      let end = eof && nul === -1 ? length : buffer.lastIndexOf(0x0a, length - 1) + 1;
      if (length === 0) end = 0;
      if (end === 0 && length > MAX_LINE_BYTES) end = length;
      if (end > 0) {
        const lines = buffer.subarray(0, end);
        const literal = needle ?? folded;
        // Case folding beyond ASCII (e.g. the Kelvin sign is a 'k'): only the regex can tell.
        const bytesTell = literal !== undefined && (needle !== undefined || isAscii(lines));
        let goOn = true;
        if (literalOnly && bytesTell) goOn = searchBytes(lines, regionStart, literal, search);
        else if (runner) {
          // Only lines holding the literal can match: the rest are never decoded or
          // sent. Near ones go as one stretch (a string per line costs more than the
          // lines between; where most lines hold it, the chunk goes nearly whole).
          const spans = bytesTell ? linesHolding(lines, literal, JOIN_WITHIN) : [0, end];
          if (spans.length > 0) goOn = await searchText(lines, spans, regionStart, runner, search);
        }
        if (!goOn) return;
        counter.advance(lines, regionStart);
      }
      if (eof || nul !== -1) return;
      buffer.copyWithin(0, end, length);
      carry = length - end;
      regionStart += end;
    }
  } finally {
    closeSync(fd);
    // A buffer grown for a long line is not kept for the files after it.
    if (lane.buffer.length > CHUNK * 2) lane.buffer = Buffer.allocUnsafe(CHUNK * 2);
  }
}

/** Where a search of a file with a NUL at `offset` stops: the start of ripgrep's 64 KiB read that holds it. */
function binaryCutoff(offset: number): number {
  return offset - (offset % (64 << 10));
}

/** One file being searched: where matches go and how their lines are numbered. */
interface FileSearch {
  file: string;
  counter: LineCounter;
  lineRegex: RegExp;
  maxLineChars: number;
  run: GrepRun;
}

/** Report one matching line; false when this file (or the whole search) is done. */
function report(search: FileSearch, lines: Buffer, base: number, byteStart: number, text: string): boolean {
  const { file, counter, maxLineChars, run } = search;
  const line = counter.lineAt(base + byteStart, lines, base);
  return run.emit({ path: file, line, text: clipLine(text, maxLineChars) }) && !run.blobFull(file);
}

/** How far past a regex's literal (in bytes) the lines sent to its worker reach. */
const JOIN_WITHIN = 16 << 10;

/**
 * The lines of `lines` where `literal` occurs: [start, end) byte ranges without
 * their '\n', flattened. With `joinWithin`, a range also takes the lines up to
 * that many bytes past its literal, and the next one found that close extends
 * it: lines between come along, and where the literal is on most lines the
 * search takes one step per `joinWithin` bytes rather than one per line.
 */
function linesHolding(lines: Buffer, literal: Literal, joinWithin = 0): number[] {
  const spans: number[] = [];
  let from = 0;
  for (;;) {
    const hit = literal.indexIn(lines, from);
    if (hit === -1) return spans;
    const start = hit === 0 ? 0 : lines.lastIndexOf(0x0a, hit - 1) + 1;
    let end = hit + joinWithin < lines.length ? lines.indexOf(0x0a, hit + joinWithin) : -1;
    if (end === -1) end = lines.length;
    if (joinWithin > 0 && spans.length > 0 && start - spans[spans.length - 1]! <= joinWithin) spans[spans.length - 1] = end;
    else spans.push(start, end);
    from = end + 1;
  }
}

/** Find a literal in `lines` and report the lines that hold it. */
function searchBytes(lines: Buffer, base: number, literal: Literal, search: FileSearch): boolean {
  const spans = linesHolding(lines, literal);
  for (let i = 0; i < spans.length; i += 2) {
    const text = lines.toString('utf8', spans[i], spans[i + 1]);
    // Bytes and decoded text agree for valid UTF-8; re-check so invalid bytes behave like rg's text view.
    if (search.lineRegex.test(text) && !report(search, lines, base, spans[i]!, text)) return false;
  }
  return true;
}

/**
 * Let the regex worker pick the matching lines among `spans` of `lines`
 * (ranges of whole lines, as linesHolding gives); report them in order.
 */
async function searchText(lines: Buffer, spans: number[], base: number, runner: RegexRunner, search: FileSearch): Promise<boolean> {
  const parts: string[] = [];
  for (let i = 0; i < spans.length; i += 2) parts.push(lines.toString('utf8', spans[i], spans[i + 1]));
  const text = parts.join('\n');
  const hits = await runner.find(text);
  // Walk the hits (in order) and the parts together: where a part starts in `text` and in `lines`, and
  // the line reached, by its start in both. Lines are counted by their '\n', which decoding keeps one for
  // one (text re-encoded would not give the bytes back: an invalid byte decodes to a 3-byte U+FFFD).
  let part = 0;
  let partStart = 0;
  let strPos = 0;
  let bytePos = spans[0]!;
  for (let i = 0; i < hits.length; i += 2) {
    const start = hits[i]!;
    while (part + 1 < parts.length && start >= partStart + parts[part]!.length + 1) {
      partStart += parts[part]!.length + 1;
      part++;
      strPos = partStart;
      bytePos = spans[part * 2]!;
    }
    for (let nl = text.indexOf('\n', strPos); nl !== -1 && nl < start; nl = text.indexOf('\n', strPos)) {
      bytePos = lines.indexOf(0x0a, bytePos) + 1;
      strPos = nl + 1;
    }
    if (!report(search, lines, base, bytePos, text.slice(start, hits[i + 1]!))) return false;
  }
  return true;
}
