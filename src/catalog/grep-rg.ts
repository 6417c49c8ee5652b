// The ripgrep engine: one rg process per batch of folders and files, its
// plain output read as bytes. `--max-columns` with a preview keeps each
// printed line short however long the matched line is (rg's JSON output
// would print a 400 MB line whole), and the reader only ever scans bytes it
// has not scanned before.
import { spawn } from 'node:child_process';
import { MANIFEST_NAME } from '../spill/manifest';
import { regularFileProblem } from '../spill/regular-file';
import { clipLine, type BlobFolder, type GrepRun } from './grep';
import { LineReader } from './line-reader';

/** Bytes of file and folder arguments given to one rg process. */
const RG_ARGS_BYTES = 96 * 1024;
/** A printed line longer than this is not rg's (clipped lines are short): it is dropped. */
const MAX_OUTPUT_LINE = 1 << 20;

export interface RipgrepTargets {
  /** Folders searched whole (one level, Spillway's manifests left out). */
  folders: BlobFolder[];
  /** Keeps a match only in a file the caller knows. */
  accept?: (file: string) => boolean;
  /** Until it settles, matches and errors are held (rg pauses when too many wait): accept cannot judge them yet. */
  ready?: Promise<unknown>;
  /** Keeps a file or folder's error (default: all). */
  keepError?: (file: string) => boolean;
}

/** Matches held before `ready` settles; past this rg's output is left unread (it blocks). */
const HELD_LINES = 4096;

export async function runRipgrep(rg: string, run: GrepRun, targets: RipgrepTargets): Promise<void> {
  const { options, sizes, summary, progress, signal } = run;
  const base = ['--no-config', '--no-ignore', '--hidden', '--no-heading', '--with-filename', '--null', '--line-number', '--color', 'never'];
  // Bytes, not chars: the preview holds at least maxLineChars chars, then clipLine cuts as the Node engine does.
  base.push('--max-columns', String(Math.max(1, options.maxLineChars) * 4), '--max-columns-preview');
  if (!options.regex) base.push('--fixed-strings');
  if (options.ignoreCase) base.push('--ignore-case');
  // One more than the cap: the extra match says the blob was cut (it is not printed).
  if (options.maxPerBlob > 0) base.push('--max-count', String(options.maxPerBlob + 1));
  base.push('--glob', `!${MANIFEST_NAME}`, '--glob', `!.${MANIFEST_NAME}.*`, '--max-depth', '1');
  base.push('-e', options.pattern, '--');
  // rg opens named files through symlinks and blocks on FIFOs: hand it regular files only.
  // (Inside folders it skips both by itself.)
  const problems = await Promise.all(options.paths.map((p) => regularFileProblem(p).catch(() => undefined)));
  const regular: string[] = [];
  // Per target: files and bytes it adds to the progress once searched.
  const weight = new Map<string, { files: number; bytes: number }>(targets.folders.map((f) => [f.path, f]));
  options.paths.forEach((p, i) => {
    const problem = problems[i];
    if (!problem) {
      regular.push(p);
      weight.set(p, { files: 1, bytes: sizes[i] ?? 0 });
    } else {
      summary.errors.push({ path: p, message: problem.message });
      progress.filesDone++;
    }
  });
  for (const batch of batches([...targets.folders.map((f) => f.path), ...regular])) {
    if (signal?.aborted || summary.truncated) return;
    await searchBatch(rg, [...base, ...batch], run, targets);
    for (const target of batch) {
      const done = weight.get(target);
      if (!done) continue;
      progress.filesDone += done.files;
      progress.bytesDone += done.bytes;
    }
    run.onProgress?.({ ...progress });
  }
}

function batches(targets: string[]): string[][] {
  const out: string[][] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (const target of targets) {
    if (bytes + target.length > RG_ARGS_BYTES && batch.length > 0) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(target);
    bytes += target.length + 1;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

function searchBatch(rg: string, args: string[], run: GrepRun, targets: RipgrepTargets): Promise<void> {
  const { options, summary, signal } = run;
  const { accept, keepError = () => true } = targets;
  return new Promise<void>((resolve, reject) => {
    const child = spawn(rg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stopped = false;
    const stop = (): void => {
      stopped = true;
      child.kill();
    };
    signal?.addEventListener('abort', stop, { once: true });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 64 * 1024) stderr += d;
    });
    const onLine = (line: Buffer): void => {
      if (stopped) return;
      // `path\0number:text`; anything else (rg's "binary file matches" notes) is not a match.
      const nul = line.indexOf(0);
      if (nul <= 0) return;
      const colon = line.indexOf(0x3a, nul + 1);
      const number = Number(line.toString('latin1', nul + 1, colon));
      if (colon === -1 || !Number.isInteger(number) || number < 1) return;
      const file = line.toString('utf8', 0, nul);
      if (accept && !accept(file)) return;
      const text = clipLine(line.toString('utf8', colon + 1), options.maxLineChars);
      if (!run.emit({ path: file, line: number, text })) stop();
    };
    // Lines are held while the caller cannot judge them yet (the reader's chunks are never reused).
    let held: Buffer[] | undefined = targets.ready ? [] : undefined;
    const ready = targets.ready ?? Promise.resolve();
    ready.then(
      () => {
        const waiting = held ?? [];
        held = undefined;
        for (const line of waiting) onLine(line);
        child.stdout.resume();
      },
      () => stop(),
    );
    const lines = new LineReader(MAX_OUTPUT_LINE, (line) => {
      if (!held) return onLine(line);
      held.push(line);
      if (held.length >= HELD_LINES) child.stdout.pause();
    });
    child.stdout.on('data', (chunk: Buffer) => lines.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      signal?.removeEventListener('abort', stop);
      lines.end();
      const finish = (): void => {
        if (code === 2 && !stopped) {
          // Per-file problems (vanished, unreadable) go to the summary; anything else is rg's failure.
          const fileErrors = stderr.split('\n').filter((l) => /^[^:]+: .*\(os error \d+\)/.test(l) || /^rg: .+: /.test(l));
          for (const l of fileErrors) {
            const m = /^(?:rg: )?(.+?): (.+)$/.exec(l);
            if (m && keepError(m[1]!)) summary.errors.push({ path: m[1]!, message: m[2]! });
          }
          if (fileErrors.length === 0 && stderr.trim()) {
            reject(new Error(`ripgrep: ${stderr.trim().split('\n')[0]}`));
            return;
          }
        }
        resolve();
      };
      // Held lines are judged (and errors kept or not) once the caller can tell.
      ready.then(() => setImmediate(finish), () => resolve());
    });
  });
}
