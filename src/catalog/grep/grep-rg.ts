// The ripgrep engine: one rg process per batch of folders and files, its
// plain output read as bytes. `--max-columns` with a preview keeps each
// printed line short however long the matched line is (rg's JSON output
// would print a 400 MB line whole), and the reader only ever scans bytes it
// has not scanned before. On Linux rg never resolves a blob's folders by
// path: each folder and file is opened here (below its root, never through a
// symlink) and handed to rg as an inherited descriptor it reads through
// /proc/self/fd/<n>; the paths it prints are mapped back.
import type { ChildProcessByStdio } from 'node:child_process';
import { closeSync, readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { FOLDERS_HELD_OPEN } from '../../spill/anchored-dir';
import { MANIFEST_NAME } from '../../spill/manifest';
import type { BlobFolder, GrepRun } from './targets';
import { clipLine } from './grep-file';
import { LineReader } from './line-reader';
import { rgOutput } from './rg-output';
import { pauser } from '../shared/pause';
import { cmp } from '../shared/cmp';

// Loaded when ripgrep runs: child_process brings net and dgram, a few ms of every command's start otherwise
// (the catalog, and so `list`, carries this module).
const childProcess = (): typeof import('node:child_process') => require('node:child_process');

/** Bytes of file and folder arguments given to one rg process (well under the smallest ARG_MAX, macOS's 1 MB). */
const RG_ARGS_BYTES = 256 * 1024;
/**
 * Folders and files given to one rg process. On Linux each is a descriptor
 * held here and inherited by rg; two batches are held at once (the next is
 * opened while rg searches one), and a child briefly holds its parent's
 * descriptors beside its own copies, so at most a third of the open-file
 * limit (less a margin for rg's own files). As few rg processes as that
 * allows: each one started costs its own start and pass.
 */
const RG_ARGS_COUNT = FOLDERS_HELD_OPEN ? Math.max(32, Math.min(8192, Math.floor((openFileLimit() - 256) / 3))) : 1024;

/** The soft limit on open files (Linux: /proc/self/limits; Node raised it to the hard limit at start). */
function openFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? (m[1] === 'unlimited' ? 1 << 20 : Number(m[1])) : 1024;
  } catch {
    return 1024;
  }
}
/** The descriptor rg gets the first target on (after stdin, stdout, stderr). */
const FIRST_FD = 3;
/** A printed line longer than this is not rg's (clipped lines are short): it is dropped. */
const MAX_OUTPUT_LINE = 1 << 20;

/**
 * Throws ripgrep's own parse error for a pattern it refuses. Most patterns are valid JavaScript too
 * (`jsCheck` passes): only the others cost ripgrep a run, on empty input.
 */
export function checkRipgrepSyntax(rg: string, pattern: string, jsCheck: () => unknown): void {
  try {
    jsCheck();
    return;
  } catch {
    // Not JavaScript: ripgrep's syntax may still hold it.
  }
  const run = childProcess().spawnSync(rg, ['--no-config', '--regexp', pattern, '-'], { input: '', encoding: 'utf8', timeout: 10_000 });
  if (run.status === 2) throw new Error(`ripgrep: ${run.stderr.trim()}`);
}

export interface RipgrepTargets {
  /** Folders searched whole, or for the files their glob names (one level, Spillway's manifests left out). */
  folders: BlobFolder[];
  /** Keeps a match only in a file the caller knows. */
  accept?: (file: string) => boolean;
  /** Until it settles, matches and errors are held (rg pauses when too many wait): accept cannot judge them yet. */
  ready?: Promise<unknown>;
  /**
   * Before `ready`, a match this says yes to is reported at once instead of
   * held. It may learn only later: the lines held until then are judged
   * again when `judgeAgain` settles.
   */
  acceptNow?: (file: string) => boolean;
  judgeAgain?: Promise<unknown>;
  /** Keeps a file or folder's error (default: all). */
  keepError?: (file: string) => boolean;
  /** Called once ripgrep searches the first batch (or once there is none to search). */
  searching?: () => void;
}

/**
 * Bytes of matches held before `ready` settles; past this rg's output is left
 * unread (it blocks). Counted in bytes, not lines: 4,096 lines stalled rg
 * half-way through 100,000 blobs until the catalog had loaded.
 */
const HELD_BYTES = 32 << 20;

/** Search `targets` with rg, in batches; resolves to the targets searched (those that could be opened). */
export async function runRipgrep(rg: string, run: GrepRun, targets: RipgrepTargets): Promise<string[]> {
  const { options, sizes, summary, progress, signal } = run;
  const base = ['--no-config', '--no-ignore', '--hidden', '--no-heading', '--with-filename', '--null', '--line-number', '--color', 'never'];
  // Bytes, not chars: the preview holds at least maxLineChars chars, then clipLine cuts as the Node engine does.
  base.push('--max-columns', String(Math.max(1, options.maxLineChars) * 4), '--max-columns-preview');
  if (!options.regex) base.push('--fixed-strings');
  if (options.ignoreCase) base.push('--ignore-case');
  // One more than the cap: the extra match says the blob was cut (it is not printed).
  if (options.maxPerBlob > 0) base.push('--max-count', String(options.maxPerBlob + 1));
  base.push('--glob', `!${MANIFEST_NAME}`, '--glob', `!.${MANIFEST_NAME}.*`, '--max-depth', '1');
  // Folders read only for their blobs' names last, side by side: a glob applies to a whole rg (see batches).
  const folders = [...targets.folders].sort((a, b) => cmp(a.names ?? '', b.names ?? ''));
  const all: Target[] = [
    ...options.paths.map((p, i) => ({ path: p, folder: false, files: 1, bytes: sizes[i] ?? 0 })),
    ...folders.map((f) => ({ path: f.path, folder: true, names: f.names, files: f.files, bytes: f.bytes })),
  ];
  const searched: string[] = [];
  const list = batches(all);
  const open = (i: number): Promise<OpenedBatch> => openBatch(list[i]!, run, targets.keepError ?? (() => true));
  // The next batch, opened (each folder checked) while rg searches the one before: over 50,000 folders, opening
  // them took about a second, which rg then waited for batch by batch.
  let opening: Promise<OpenedBatch> | undefined;
  try {
    for (const [i, batch] of list.entries()) {
      if (signal?.aborted || summary.truncated) return searched;
      const opened = await (opening ?? open(i));
      opening = undefined;
      const names = batch[0]!.names;
      try {
        if (opened.args.length > 0) {
          const search = searchBatch(rg, [...base, ...(names !== undefined ? ['--glob', names] : []), '-e', options.pattern, '--', ...opened.args], run, targets, opened);
          targets.searching?.();
          if (i + 1 < list.length) {
            opening = open(i + 1);
            opening.catch(() => undefined); // awaited later: not an unhandled rejection meanwhile
          }
          await search;
        }
      } finally {
        opened.close();
      }
      for (const held of opened.held) searched.push(held);
      for (const target of batch) {
        progress.filesDone += target.files;
        progress.bytesDone += target.bytes;
      }
      run.onProgress?.({ ...progress });
    }
    return searched;
  } finally {
    // A batch opened ahead but never searched (cancelled, capped, or rg failed): its descriptors are let go.
    await opening?.then((opened) => opened.close(), () => undefined);
    targets.searching?.();
  }
}

/** A folder searched whole (or for the files its glob names) or a file searched by name, with what it adds to the progress. */
interface Target {
  path: string;
  folder: boolean;
  names?: string;
  files: number;
  bytes: number;
}

/** A batch's targets opened for rg: its arguments, the descriptors it inherits, and the way back to the targets' paths. */
interface OpenedBatch {
  /** The targets opened (the others could not be). */
  held: string[];
  args: string[];
  fds: number[];
  /** The path rg printed, as the caller named it. */
  named: (printed: string) => string;
  /** Lets the descriptors go (again: nothing). */
  close: () => void;
}

/**
 * Open each target the way reads reach it (a folder below its root, a file
 * checked where it lies: regular, one link, never a symlink, never a FIFO rg
 * would block on). One that cannot be opened is an error, not searched.
 * Synchronously, yielding every few ms: a promise and a FileHandle per file
 * cost many times rg's own time.
 */
async function openBatch(batch: readonly Target[], run: GrepRun, keepError: (file: string) => boolean): Promise<OpenedBatch> {
  const closers: Array<() => void> = [];
  const held: string[] = [];
  const args: string[] = [];
  const fds: number[] = [];
  const byFd = new Map<string, string>();
  const pause = pauser();
  for (const target of batch) {
    const turn = pause();
    if (turn) await turn;
    let fd: number | undefined;
    try {
      if (target.folder) {
        const dir = run.reads.holdFolder(target.path);
        fd = dir.fd;
        closers.push(() => dir.close());
      } else {
        const file = run.reads.openSync(target.path);
        fd = file.fd;
        closers.push(() => closeSync(file.fd));
      }
    } catch (err) {
      if (keepError(target.path)) run.summary.errors.push({ path: target.path, message: (err as Error).message });
      continue;
    }
    held.push(target.path);
    if (FOLDERS_HELD_OPEN && fd !== undefined) {
      const arg = `/proc/self/fd/${FIRST_FD + fds.length}`;
      fds.push(fd);
      args.push(arg);
      byFd.set(arg, target.path);
    } else args.push(target.path);
  }
  const named = (printed: string): string => {
    const m = /^(\/proc\/self\/fd\/\d+)(\/.*)?$/s.exec(printed); // s: a name may hold '\n'
    const target = m ? byFd.get(m[1]!) : undefined;
    return target === undefined ? printed : target + (m![2] ?? '');
  };
  return { held, args, fds, named, close: () => closers.splice(0).forEach((close) => close()) };
}

/** Targets in rg-sized batches, each of one glob (`names`): a glob applies to all of an rg's folders. */
function batches(targets: readonly Target[]): Target[][] {
  const out: Target[][] = [];
  let batch: Target[] = [];
  let bytes = 0;
  for (const target of targets) {
    // What rg is given: a target held open is named /proc/self/fd/<n> (24 bytes at most), else its path.
    const arg = FOLDERS_HELD_OPEN ? 24 : target.path.length + 1;
    if ((bytes + arg > RG_ARGS_BYTES || batch.length >= RG_ARGS_COUNT || target.names !== batch[0]?.names) && batch.length > 0) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(target);
    bytes += arg;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/**
 * rg's notes on a binary file ("binary file matches (found ...)", "WARNING: stopped searching binary file after
 * match (found ...)"), printed without the NUL after the path that a match line has.
 */
const BINARY_NOTE = /: .*binary file.* \(found .* byte around offset \d+\)$/;

/**
 * rg's records from its '\n'-split lines: a match is `path\0number:text`, and a file name may hold '\n', so a
 * line without a NUL that is not one of rg's notes is the start of a path, joined with what follows.
 */
function wholeRecords(onRecord: (record: Buffer) => void): (line: Buffer) => void {
  let start: Buffer[] = [];
  let startBytes = 0;
  return (line) => {
    if (line.includes(0)) {
      if (start.length === 0) return onRecord(line);
      const record = Buffer.concat([...start, line]);
      start = [];
      startBytes = 0;
      return onRecord(record);
    }
    if (BINARY_NOTE.test(line.toString('latin1'))) {
      // A note ends a path begun on an earlier line too (it is never a match: passed on whole).
      const note = start.length === 0 ? line : Buffer.concat([...start, line]);
      start = [];
      startBytes = 0;
      return onRecord(note);
    }
    if (startBytes + line.length + 1 > MAX_OUTPUT_LINE) {
      start = []; // no path is this long: not a record
      startBytes = 0;
      return;
    }
    start.push(line, NEWLINE);
    startBytes += line.length + 1;
  };
}
const NEWLINE = Buffer.from('\n');

function searchBatch(rg: string, args: string[], run: GrepRun, targets: RipgrepTargets, opened: OpenedBatch): Promise<void> {
  const { options, summary, signal } = run;
  const { accept, keepError = () => true } = targets;
  return new Promise<void>((resolve, reject) => {
    const output = rgOutput();
    const child = childProcess().spawn(rg, args, { stdio: ['ignore', output.stdio, 'pipe', ...opened.fds] }) as ChildProcessByStdio<null, Readable | null, Readable>;
    // spawn returns once rg runs (or could not start), holding its own copies of the descriptors: these are let go
    // now, while rg searches, not after it (closing 5,000 took 15-35 ms at the end of a grep).
    opened.close();
    // Out of descriptors for its pipes, spawn hands back a child without them (its error follows).
    if (!child.stderr || (output.stdio === 'pipe' && !child.stdout)) {
      child.once('error', () => undefined);
      output.release();
      reject(new Error('ripgrep could not be started: no pipes for its output (too many open files?)'));
      return;
    }
    let stopped = false;
    const stop = (): void => {
      stopped = true;
      child.kill();
      output.release(); // a stopped rg is continued, so that it ends
    };
    signal?.addEventListener('abort', stop, { once: true });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 64 * 1024) stderr += d;
    });
    /** A line of rg's output as a match: `path\0number:text`; anything else (rg's "binary file matches" notes) is none. */
    const parse = (line: Buffer): { file: string; number: number; colon: number } | undefined => {
      const nul = line.indexOf(0);
      if (nul <= 0) return undefined;
      const colon = line.indexOf(0x3a, nul + 1);
      const number = Number(line.toString('latin1', nul + 1, colon));
      if (colon === -1 || !Number.isInteger(number) || number < 1) return undefined;
      return { file: opened.named(line.toString('utf8', 0, nul)), number, colon };
    };
    // Lines are held while the caller cannot judge them yet (the reader's chunks are never reused).
    let held: Buffer[] | undefined = targets.ready ? [] : undefined;
    let heldBytes = 0;
    type Match = { file: string; number: number; colon: number };
    /**
     * Lines waiting while the reader of the matches is behind, in order (`m`: a match judged already).
     * Nothing is reported past a reader that is behind, and rg's output is not read meanwhile.
     */
    let queued: Array<{ line: Buffer; m?: Match }> = [];
    let next = 0;
    let waitingForReader = false;
    let queueEmptied: (() => void) | undefined;
    const resume = (): void => {
      if (!waitingForReader && heldBytes < HELD_BYTES && queued.length === 0) output.resume();
    };
    const report = (line: Buffer, m: Match): void => {
      const text = clipLine(line.toString('utf8', m.colon + 1), options.maxLineChars);
      if (!run.emit({ path: m.file, line: m.number, text })) return stop();
      const behind = run.readerBehind();
      if (!behind || waitingForReader) return;
      waitingForReader = true;
      output.pause();
      void behind.then(() => {
        waitingForReader = false;
        pump();
      });
    };
    const onLine = (line: Buffer): void => {
      if (stopped) return;
      const m = parse(line);
      if (m && (!accept || accept(m.file))) report(line, m);
    };
    /** Report what is queued until the reader is behind again; once all is out, read rg's output again. */
    const pump = (): void => {
      while (next < queued.length && !waitingForReader && !stopped) {
        const { line, m } = queued[next++]!;
        if (m) report(line, m);
        else onLine(line);
      }
      if (next < queued.length && !stopped) return; // the reader's catching up pumps again
      queued = [];
      next = 0;
      resume();
      const emptied = queueEmptied;
      queueEmptied = undefined;
      emptied?.();
    };
    /** Report a line now, or queue it behind what waits for the reader. */
    const send = (line: Buffer, m?: Match): void => {
      if (queued.length > 0 || waitingForReader) queued.push({ line, m });
      else if (m) report(line, m);
      else onLine(line);
    };
    const { acceptNow } = targets;
    /** Before `ready`: send the line now if acceptNow knows it, else hold it. */
    const holdOrSend = (line: Buffer): boolean => {
      const m = acceptNow && !stopped ? parse(line) : undefined;
      if (!m || !acceptNow!(m.file)) return false;
      send(line, m);
      return true;
    };
    targets.judgeAgain?.then(() => {
      if (!held) return;
      held = held.filter((line) => !holdOrSend(line));
      heldBytes = held.reduce((n, line) => n + line.length, 0);
      resume();
    }, () => undefined);
    const ready = targets.ready ?? Promise.resolve();
    ready.then(
      () => {
        const waiting = held ?? [];
        held = undefined;
        heldBytes = 0;
        for (const line of waiting) queued.push({ line });
        pump();
      },
      () => stop(),
    );
    const lines = new LineReader(
      MAX_OUTPUT_LINE,
      wholeRecords((line) => {
        if (!held) return send(line);
        if (holdOrSend(line)) return;
        held.push(line);
        heldBytes += line.length;
        if (heldBytes >= HELD_BYTES) output.pause();
      }),
    );
    output.follow(child, (chunk) => lines.push(chunk));
    child.on('error', (err) => {
      output.release();
      reject(err);
    });
    child.on('close', (code) => output.whenRead(() => {
      signal?.removeEventListener('abort', stop);
      lines.end();
      const finish = (): void => {
        if (code === 2 && !stopped) {
          // Per-file problems (vanished, unreadable) go to the summary; anything else is rg's failure.
          const fileErrors = stderr.split('\n').filter((l) => /^[^:]+: .*\(os error \d+\)/.test(l) || /^rg: .+: /.test(l));
          for (const l of fileErrors) {
            const m = /^(?:rg: )?(.+?): (.+)$/.exec(l);
            const file = m ? opened.named(m[1]!) : undefined;
            if (file !== undefined && keepError(file)) summary.errors.push({ path: file, message: m![2]! });
          }
          if (fileErrors.length === 0 && stderr.trim()) {
            reject(new Error(`ripgrep: ${stderr.trim()}`)); // whole: a regex parse error shows the pattern and a caret under the fault
            return;
          }
        }
        resolve();
      };
      // Held lines are judged (and errors kept or not) once the caller can tell, and finished with what is queued.
      const queueOut = (): Promise<void> => (queued.length === 0 ? Promise.resolve() : new Promise((done) => (queueEmptied = done)));
      ready.then(() => queueOut().then(() => setImmediate(finish)), () => resolve());
    }));
  });
}
