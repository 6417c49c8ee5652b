// Search blobs: ripgrep when one is found, else a streaming Node search that
// yields the same matches (same line numbers, same clipped text).
import { accessSync, constants as C, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { SearchAhead, type SearchAheadJob } from './grep-ahead';
import { CHUNK, searchFile, type FileSearchRun, type Lane, type Matcher } from './grep-file';
import { Literal } from './literal';
import { pauser } from '../shared/pause';
import { AS_NAMED, RootedReads, type ReadAnchor } from '../read/rooted-read';
import { RegexRunner } from './regex-worker';
import { checkRipgrepSyntax, runRipgrep } from './grep-rg';
import type { GrepMatch, GrepOptions, GrepProgress, GrepSummary } from '../types';
import type { BlobFolder, GrepRun, GrepTargets, Resolved } from './targets';

export { clipLine } from './grep-file';
export type { BlobFolder, BlobFolderNames, GrepTargets } from './targets';

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
  begin: (withRipgrep: boolean, searching: Promise<void>) => Loading,
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
    searchAhead: options.searchAhead,
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
  const run: GrepRun = { options: resolved, sizes: [], emit, blobFull, readerBehind: () => behind, stopped: () => !!signal?.aborted, summary, progress, signal, reads: AS_NAMED, onProgress };

  // Settles once ripgrep searches the early folders, or there are none: opening each (and checking it through
  // /proc/self/fd) takes this thread, which a scan started meanwhile shares (begin() may wait for it).
  let searching!: () => void;
  const { early, provisional, targets, reads } = begin(!!rg, new Promise<void>((resolve) => (searching = resolve)));
  if (reads) run.reads = reads;
  // Awaited below; until then a failure must not count as unhandled.
  targets.catch(() => undefined);
  let started: Awaited<ReturnType<typeof startEarly>>;
  try {
    started = rg ? await startEarly(rg, run, await early, targets, provisional, searching) : undefined;
  } finally {
    if (!started) searching();
  }
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
  searching: () => void,
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
    searching,
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
  const ended = (): boolean => !!signal?.aborted || summary.truncated;
  const fileDone = (f: number): void => {
    progress.filesDone++;
    progress.bytesDone += sizes[f] ?? 0;
    onProgress?.({ ...progress });
  };
  const there = bytesOnly ? searchAhead(run, lineRegex, fileDone) : undefined;
  const stopThere = (): void => there?.stop();
  signal?.addEventListener('abort', stopThere, { once: true });
  // Files are read synchronously into buffers each lane reuses: from the page
  // cache that is several times faster than the promise API (a thread-pool
  // round trip per open, stat, read and close). `pause` hands the event loop
  // its turn every few milliseconds (cancelling, progress, the regex workers,
  // the matches the worker posts). Bytes alone need one lane; with the regex,
  // three files in flight let the reads and byte checks of two overlap the
  // worker judging the third.
  const pause = pauser();
  const lane = async (take: () => number | undefined): Promise<void> => {
    const runner = bytesOnly ? undefined : new RegexRunner(lineRegex, options.regexTimeoutMs);
    const matcher: Matcher = { needle, folded, literalOnly: !options.regex, runner, lineRegex, maxLineChars: options.maxLineChars };
    const buffers: Lane = { buffer: Buffer.allocUnsafe(CHUNK * 2), pause };
    try {
      for (let f = take(); f !== undefined; f = take()) {
        const file = options.paths[f]!;
        try {
          await searchFile(file, matcher, run, buffers);
        } catch (err) {
          summary.errors.push({ path: file, message: (err as Error).message });
        }
        fileDone(f);
      }
    } finally {
      await runner?.close();
    }
  };
  try {
    // From the first file on, until the worker's (which goes from the last one back).
    let next = 0;
    const take = (): number | undefined => {
      if (ended() || next >= options.paths.length) return undefined;
      const f = next++;
      if (!there || there.take(f)) return f;
      next = options.paths.length;
      return undefined;
    };
    await Promise.all(Array.from({ length: bytesOnly ? 1 : 3 }, () => lane(take)));
    // What a worker that stopped took and never reported.
    const left = (await there?.finish()) ?? [];
    if (left.length > 0) await lane(() => (ended() ? undefined : left.shift()));
  } finally {
    signal?.removeEventListener('abort', stopThere);
    stopThere(); // one still going after a failure here ends by itself
  }
}

/**
 * A worker searching the files from the last one back, its matches reported here as they come (see grep-ahead.ts);
 * undefined when the files are too few bytes for it, or it cannot start. Only reads as named or below the catalog's
 * roots, which the worker can make again, are shared.
 */
function searchAhead(run: GrepRun, lineRegex: RegExp, fileDone: (f: number) => void): SearchAhead | undefined {
  const { options, summary, reads, signal } = run;
  if (options.searchAhead === false || !(reads === AS_NAMED || reads instanceof RootedReads)) return undefined;
  const job = (): Omit<SearchAheadJob, 'state'> => ({
    paths: options.paths.join('\0'),
    count: options.paths.length,
    literal: options.pattern,
    lineRegex: { source: lineRegex.source, flags: lineRegex.flags },
    maxResults: options.maxResults,
    maxPerBlob: options.maxPerBlob,
    maxLineChars: options.maxLineChars,
    roots: reads instanceof RootedReads ? reads.roots : undefined,
  });
  const there: SearchAhead | undefined = SearchAhead.start(options.paths.length, sum(run.sizes, (n) => n), job, (done, found) => {
    for (const [at, matches, error] of found) {
      const file = options.paths[at]!;
      for (const [line, text] of matches) if (!run.emit({ path: file, line, text }) || run.blobFull(file)) break;
      if (error !== undefined) summary.errors.push({ path: file, message: error });
    }
    for (const at of done) fileDone(at);
    if (summary.truncated || signal?.aborted) return there?.stop();
    // A slower reader holds the worker too, until it has caught up.
    const behind = run.readerBehind();
    if (behind) {
      there?.hold(true);
      void behind.then(() => there?.hold(false));
    }
  }, options.searchAhead);
  return there;
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

