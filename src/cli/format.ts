// Shared helpers of the catalog commands: argument parsing with clear
// errors, human sizes and durations, and the catalog a command reads.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Catalog, sessionsNamed } from '../catalog/catalog';
import { defaultCacheDir } from '../catalog/index/index-file';
import { SOURCE_NAMES, type SessionInfo, type SourceName } from '../catalog/types';
import { UsageError, type CliIO } from './io';
import { escapeControls, human } from './escape';
export { formatBytes } from '../common/format-bytes';

export { escapeControls, human };

type Options = NonNullable<ParseArgsConfig['options']>;

/** util.parseArgs with its errors turned into UsageError. */
export function parseFlags<T extends Options>(argv: string[], options: T, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

/** The flags every catalog command shares. */
export const ROOT_FLAGS = {
  root: { type: 'string', multiple: true },
  'no-default-roots': { type: 'boolean' },
  source: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

export interface RootFlagValues {
  root?: string[];
  'no-default-roots'?: boolean;
  source?: string[];
}

/** The catalog the flags describe, not yet scanned. */
export function newCatalog(values: RootFlagValues, io: CliIO): Catalog {
  // An empty one is most often a variable left unset (`--root "$DIR"`): taken as this folder, it scanned all below it.
  if (values.root?.includes('')) throw new UsageError("--root is empty (give a folder; '.' for this one)");
  const sources = values.source?.map((name) => {
    if (!(SOURCE_NAMES as readonly string[]).includes(name)) throw new UsageError(`unknown source '${name}' (one of: ${SOURCE_NAMES.join(', ')})`);
    return name as SourceName;
  });
  return new Catalog({ roots: values.root, useDefaultRoots: !values['no-default-roots'], sources, env: io.env, cacheDir: defaultCacheDir(io.env) });
}

/**
 * The one session among `candidates` that `name` names (see sessionsNamed);
 * undefined once stderr says none does. Several are a usage error listing them.
 */
export function sessionNamed(command: string, name: string, candidates: readonly SessionInfo[], io: CliIO): SessionInfo | undefined {
  const found = sessionsNamed(name, candidates);
  if (found.length === 0) {
    io.stderr(human`spillway ${command}: no session '${name}' (see \`spillway list\`)\n`);
    return undefined;
  }
  if (found.length > 1) throw new UsageError(`'${name}' matches ${found.length} sessions; give a full id or key:\n${found.map((s) => `  ${s.key}`).join('\n')}`);
  return found[0];
}

/** The scan's problems (unreadable roots and folders), to stderr. */
export function reportProblems(catalog: Catalog, io: CliIO): void {
  for (const problem of catalog.problems()) io.stderr(human`spillway: ${problem}\n`);
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, t: 1024 ** 4, tb: 1024 ** 4 };

/** `5GB`, `500MB`, `1.5G`, `4096` -> bytes (binary units). */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? UNITS[m[2]!.toLowerCase().replace(/ib$/, 'b')] : undefined;
  if (!m || unit === undefined) throw new UsageError(`invalid size '${text}' (e.g. 500MB, 5GB)`);
  return Math.floor(Number(m[1]) * unit);
}

const DURATIONS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `7d`, `12h`, `30m`, `2w` -> milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(text.trim());
  if (!m) throw new UsageError(`invalid duration '${text}' (e.g. 7d, 12h, 30m)`);
  return Number(m[1]) * DURATIONS[m[2]!.toLowerCase()]!;
}

/** Left-aligned columns, cells escaped (escapeControls); the last column is never padded. */
export function table(cells: string[][]): string {
  return tableLines(cells).join('');
}

/** table() as its lines, each with its '\n'. */
export function tableLines(cells: string[][]): string[] {
  const rows = cells.map((row) => row.map(escapeControls));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ') + '\n');
}

/** Output is written in pieces of about this many characters (at most one part more). */
const PIECE_CHARS = 64 * 1024;
/** Room for a piece's UTF-8 and the part that completes it. */
const PIECE_BYTES = 4 * PIECE_CHARS;

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/** How long a part may wait to be joined by others (Pieces.flushSoon). */
const FLUSH_MS = 20;

/**
 * Parts of a long output joined into pieces of about PIECE_CHARS, each written once full: 100,000
 * rows are never joined into one string of tens of MB, held or queued for the reader.
 */
export class Pieces {
  /**
   * The piece being filled, each part encoded into it as it comes. Used again once standard output has taken it:
   * a new one per piece (as each string written became) lands on pages not touched yet whenever the GC has not freed
   * the last ones.
   */
  private piece = Buffer.allocUnsafe(PIECE_BYTES);
  private used = 0;
  private chars = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly io: CliIO) {}

  /** Whether this part completed a piece, which was written (the caller then waits for a slower reader). */
  add(part: string): boolean {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8: a part that may not fit goes after what is held.
    const room = 3 * part.length;
    if (this.used + room > this.piece.length) {
      this.flush();
      if (room > this.piece.length) this.piece = Buffer.allocUnsafe(room);
    }
    this.used += this.piece.write(part, this.used);
    this.chars += part.length;
    if (this.chars < PIECE_CHARS) return false;
    this.flush();
    return true;
  }

  /** Adds each part, waiting for a slower reader after each piece written. */
  async addAll(parts: Iterable<string>): Promise<void> {
    for (const part of parts) if (this.add(part)) await this.io.caughtUp?.();
  }

  /**
   * Adds each part, a part longer than what the piece has room for split across pieces (never inside a surrogate
   * pair: each slice is encoded alone), waiting for a slower reader after each piece written.
   */
  async addAllSplit(parts: Iterable<string>): Promise<void> {
    for (const part of parts) {
      let from = 0;
      while (part.length - from > PIECE_CHARS - this.chars) {
        let to = from + PIECE_CHARS - this.chars;
        if (isHighSurrogate(part.charCodeAt(to - 1))) to--;
        if (to <= from) to = from + 2; // the pair whole, one character past the piece
        if (this.add(part.slice(from, to))) await this.io.caughtUp?.();
        from = to;
      }
      if (this.add(from === 0 ? part : part.slice(from))) await this.io.caughtUp?.();
    }
  }

  /** Writes what is held. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.used === 0) return;
    if (this.io.stdout(this.piece.subarray(0, this.used)) !== true || this.piece.length > PIECE_BYTES) this.piece = Buffer.allocUnsafe(PIECE_BYTES);
    this.used = 0;
    this.chars = 0;
  }

  /**
   * Writes what is held within FLUSH_MS: parts that come one at a time (ripgrep reports each blob's
   * matches apart) go out many to a write, not one write each, and none waits long.
   */
  flushSoon(): void {
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }
}

/** Writes `parts` in pieces, waiting for a slower reader between them. */
export async function writeInPieces(io: CliIO, parts: Iterable<string>): Promise<void> {
  const pieces = new Pieces(io);
  await pieces.addAll(parts);
  pieces.flush();
}

export function json(io: CliIO, value: unknown): void {
  io.stdout(JSON.stringify(value, null, 2) + '\n');
}
