// Where ripgrep's output goes: on Linux a private file read every few ms,
// elsewhere (or when no such file can be made) a pipe. ripgrep writes each
// file's matches apart; through a pipe each write woke this process, and at
// 10,000 matches that cost some 0.4 s of CPU on two cores (docs/catalog.md,
// "Where a grep at 100k goes"). The file is unlinked as soon as it is made;
// rg is stopped (SIGSTOP) when a few MB wait unread, and what was read is
// given back to the disk every few MB, so the file never holds more.
import type { ChildProcess } from 'node:child_process';
import { closeSync, constants as C, fstatSync, ftruncateSync, mkdtempSync, openSync, readSync, rmdirSync, unlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { allThreadsStopped } from '../../common/process-state';

/** How often the file is read while rg runs. */
const POLL_MS = 5;
/** Bytes read at a time into a reused buffer (what was read is copied out: the line reader keeps chunks). */
const CHUNK = 256 * 1024;

export interface OutputLimits {
  /** Unread bytes past which a paused reader stops rg. */
  maxUnread: number;
  /** Bytes read past which the file is emptied (rg stopped meanwhile): what was read leaves the disk. */
  reclaimEvery: number;
}
const LIMITS: OutputLimits = { maxUnread: 8 << 20, reclaimEvery: 8 << 20 };

/** rg's standard output as this side reads it: chunks in order, pausable, and a call once all is read. */
export interface RgOutput {
  /** What spawn gives rg as its standard output. */
  readonly stdio: 'pipe' | number;
  /** Starts passing what rg writes to `onData`. */
  follow(child: ChildProcess, onData: (chunk: Buffer) => void): void;
  pause(): void;
  resume(): void;
  /** Once rg has closed its output: `done` is called when all of it has been read (at once unless paused). */
  whenRead(done: () => void): void;
  /** Lets go of the file (rg continued if stopped here, so that it can end). */
  release(): void;
}

/** A private output file on Linux, else (or when it cannot be made) a pipe. */
export function rgOutput(limits: OutputLimits = LIMITS): RgOutput {
  if (process.platform !== 'linux') return new PipeOutput();
  try {
    return new FileOutput(privateFile(), limits);
  } catch {
    return new PipeOutput();
  }
}

/** A new file no one else can reach: made in a fresh 0700 folder, opened exclusively, then unlinked with its folder. */
function privateFile(): number {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spillway-rg-'));
  const file = path.join(dir, 'out');
  try {
    const fd = openSync(file, C.O_RDWR | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
    try {
      unlinkSync(file);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    return fd;
  } finally {
    rmdirSync(dir);
  }
}

class PipeOutput implements RgOutput {
  readonly stdio = 'pipe' as const;
  private stdout: Readable | null = null;

  follow(child: ChildProcess, onData: (chunk: Buffer) => void): void {
    this.stdout = child.stdout;
    this.stdout?.on('data', onData);
  }
  pause(): void {
    this.stdout?.pause();
  }
  resume(): void {
    this.stdout?.resume();
  }
  whenRead(done: () => void): void {
    done(); // a child closes once its pipe has been read to its end
  }
  release(): void {}
}

class FileOutput implements RgOutput {
  private child: ChildProcess | undefined;
  private onData: (chunk: Buffer) => void = () => undefined;
  private offset = 0;
  private reclaimedAt = 0;
  private paused = false;
  private timer: NodeJS.Timeout | undefined;
  private done: (() => void) | undefined;
  /** Why rg is stopped here, if it is. */
  private stoppedFor: 'reader' | 'reclaim' | undefined;
  private released = false;
  private readonly scratch = Buffer.allocUnsafe(CHUNK);

  constructor(
    readonly stdio: number,
    private readonly limits: OutputLimits,
  ) {}

  follow(child: ChildProcess, onData: (chunk: Buffer) => void): void {
    this.child = child;
    this.onData = onData;
    this.timer = setInterval(() => this.tick(), POLL_MS);
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    if (this.stoppedFor === 'reader') this.continueRg();
    setImmediate(() => this.drain());
  }

  whenRead(done: () => void): void {
    this.done = done;
    this.drain();
  }

  /** Also says all is read to a whenRead still waiting: once released, nothing more will be. */
  release(): void {
    if (!this.released) {
      this.released = true;
      clearInterval(this.timer);
      this.continueRg();
      closeSync(this.stdio);
    }
    const done = this.done;
    this.done = undefined;
    if (done) queueMicrotask(done); // not inside a reader's callback that released it
  }

  private tick(): void {
    if (this.released || this.stoppedFor === 'reclaim') return;
    if (!this.paused) {
      this.drain();
      if (!this.paused && !this.released && this.offset - this.reclaimedAt >= this.limits.reclaimEvery) this.reclaim();
    } else if (this.stoppedFor === undefined && fstatSync(this.stdio).size - this.offset > this.limits.maxUnread) {
      this.stopRg('reader');
    }
  }

  /** Passes on what rg has written since, until paused; once rg is done and all is read, says so. */
  private drain(): void {
    while (!this.paused && !this.released) {
      const n = readSync(this.stdio, this.scratch, 0, CHUNK, this.offset);
      if (n === 0) break;
      this.offset += n;
      this.onData(Buffer.from(this.scratch.subarray(0, n)));
    }
    if (this.done && (this.released || !this.paused)) this.release();
  }

  /**
   * rg stopped, the rest read, then the file emptied: rg goes on writing where it was (a hole before it takes
   * no disk), and reads go on from there. Only once every rg thread is seen stopped, so no write is under way.
   */
  private reclaim(): void {
    if (!this.stopRg('reclaim')) return;
    const pid = this.child!.pid!;
    const attempt = (tries: number): void => {
      if (this.released || this.stoppedFor !== 'reclaim') return;
      const stopped = allThreadsStopped(pid);
      if (!stopped && tries > 0) {
        setTimeout(() => attempt(tries - 1), 1);
        return;
      }
      if (stopped) {
        this.drain();
        if (this.released) return; // the reader stopped the search meanwhile
        if (fstatSync(this.stdio).size === this.offset) ftruncateSync(this.stdio, 0);
        this.reclaimedAt = this.offset;
      }
      this.continueRg();
      if (this.paused && fstatSync(this.stdio).size - this.offset > this.limits.maxUnread) this.stopRg('reader');
    };
    attempt(100);
  }

  private stopRg(why: 'reader' | 'reclaim'): boolean {
    if (this.child?.exitCode !== null || this.child.signalCode !== null || !this.child.kill('SIGSTOP')) return false;
    this.stoppedFor = why;
    return true;
  }

  private continueRg(): void {
    if (this.stoppedFor === undefined) return;
    this.stoppedFor = undefined;
    this.child?.kill('SIGCONT');
  }
}
