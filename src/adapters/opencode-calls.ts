// The opencode plugin's record of each model API call of a session, for the
// per-turn chart: opencode keeps its own sessions in SQLite (WAL), which
// Spillway never reads. From opencode's `event` hook, each `step-finish` part
// (one per API call, with the call's token counts) becomes one line of
// `<session folder>/.spillway-calls.jsonl`, with the tool calls that call
// issued and the size of each result the model got back. Written with one
// synchronous write(2) per line on an O_APPEND descriptor: a line is on disk
// before the hook returns, so a killed opencode loses no call already made.
// The line format and its reader are the catalog's (catalog/sources/opencode-calls.ts).
import { closeSync, constants as C, fstatSync, openSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { sanitizeSegment } from '../spill/local-store';
import { NotRegularFileError, refusedKind } from '../spill/regular-file';
import { CALLS_FILE, CALLS_VERSION, type CallLine, type CallTokens, type RecordedToolCall } from '../catalog/sources/opencode-calls';

/** Strings of a tool input kept up to this many chars: enough for the paths a command names. */
const INPUT_STRING_CHARS = 2_000;

interface MessageFacts {
  compaction: boolean;
  tools: Map<string, RecordedToolCall>;
}

/** What the `event` hook needs to see: opencode's bus events (only the fields read here are typed). */
export interface OpencodeEvent {
  type: string;
  properties?: Record<string, unknown>;
}

/**
 * Follows a process's opencode events and appends each finished API call of
 * each session to `<root>/<session>/.spillway-calls.jsonl`. `ensureFolder`
 * makes the session folder private (the captures' own helper).
 */
export class OpencodeCallRecorder {
  private readonly messages = new Map<string, MessageFacts>();
  private readonly written = new Set<string>();
  /** Session folders already made private: later lines are appended at once, with no await before the write. */
  private readonly ready = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly ensureFolder: (dir: string) => Promise<void>,
    /**
     * Told of each line appended (after it is on disk), and again when its session goes idle, with its session and
     * the record's path.
     */
    private readonly appended?: (sessionId: string, file: string) => Promise<void>,
  ) {}

  async event(event: OpencodeEvent): Promise<void> {
    const props = event.properties ?? {};
    if (event.type === 'message.updated') return this.messageUpdated(props.info);
    if (event.type === 'message.part.updated') return this.partUpdated(props.part);
    if (event.type === 'session.idle') return this.sessionIdle(props.sessionID);
  }

  /**
   * The turn is over, its last call's line written: told once more, since `opencode run` exits at idle and may
   * have cut short what followed that line.
   */
  private async sessionIdle(sessionId: unknown): Promise<void> {
    if (typeof sessionId !== 'string') return;
    const dir = path.join(this.root, sanitizeSegment(sessionId));
    // A session this process wrote no line of has no record of ours to send.
    if (this.ready.has(dir)) await this.appended?.(sessionId, path.join(dir, CALLS_FILE));
  }

  private message(id: string): MessageFacts {
    let facts = this.messages.get(id);
    if (!facts) this.messages.set(id, (facts = { compaction: false, tools: new Map() }));
    return facts;
  }

  private messageUpdated(info: unknown): void {
    const m = info as { id?: unknown; role?: unknown; summary?: unknown; mode?: unknown; agent?: unknown; time?: { completed?: unknown } } | undefined;
    if (!m || m.role !== 'assistant' || typeof m.id !== 'string') return;
    const facts = this.message(m.id);
    if (m.summary === true || m.mode === 'compaction' || m.agent === 'compaction') facts.compaction = true;
    // Its calls are written: nothing more will come of it.
    if (typeof m.time?.completed === 'number') this.messages.delete(m.id);
  }

  private async partUpdated(value: unknown): Promise<void> {
    const part = value as Record<string, unknown> | undefined;
    if (!part || typeof part.messageID !== 'string' || typeof part.sessionID !== 'string') return;
    if (part.type === 'tool' && typeof part.callID === 'string') {
      const facts = this.message(part.messageID);
      const state = (part.state ?? {}) as { status?: unknown; input?: unknown; output?: unknown; error?: unknown };
      const call: RecordedToolCall = { id: part.callID, tool: typeof part.tool === 'string' ? part.tool : 'tool', input: cutStrings(state.input) };
      if (state.status === 'completed' && typeof state.output === 'string') call.resultChars = state.output.length;
      if (state.status === 'error' && typeof state.error === 'string') Object.assign(call, { resultChars: state.error.length, failed: true });
      facts.tools.set(part.callID, call);
      return;
    }
    if (part.type !== 'step-finish' || typeof part.id !== 'string' || this.written.has(part.id)) return;
    this.written.add(part.id);
    const facts = this.message(part.messageID);
    const line: CallLine = {
      v: CALLS_VERSION,
      sessionId: part.sessionID,
      messageId: part.messageID,
      time: new Date().toISOString(),
      tokens: tokensOf(part.tokens),
      ...(facts.compaction ? { compaction: true as const } : {}),
      toolCalls: [...facts.tools.values()],
    };
    // A message of several steps: each step's line names only the tool calls made since the previous one.
    facts.tools.clear();
    const dir = path.join(this.root, sanitizeSegment(part.sessionID));
    // `opencode run` exits as soon as the session is idle, right after the last step's event: a line written
    // behind an await could be lost, so the folder is made only once.
    if (!this.ready.has(dir)) {
      await this.ensureFolder(dir);
      this.ready.add(dir);
    }
    const file = path.join(dir, CALLS_FILE);
    appendLineSync(file, JSON.stringify(line));
    await this.appended?.(part.sessionID, file);
  }
}

function tokensOf(value: unknown): CallTokens {
  const t = (value ?? {}) as { input?: unknown; output?: unknown; reasoning?: unknown; cache?: { read?: unknown; write?: unknown } };
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
  return { input: n(t.input), output: n(t.output), reasoning: n(t.reasoning), cache: { read: n(t.cache?.read), write: n(t.cache?.write) } };
}

/** A tool input with every string cut to INPUT_STRING_CHARS (a written file's content is no turn's business). */
function cutStrings(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > INPUT_STRING_CHARS ? value.slice(0, INPUT_STRING_CHARS) : value;
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.slice(0, 64).map((v) => cutStrings(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v, depth + 1)]));
}

/**
 * Appends `line` to `file` (created 0600): never through a symlink, never blocking on a FIFO, never into a
 * file with other hard links; one write(2), so concurrent writers never interleave.
 */
export function appendLineSync(file: string, line: string): void {
  let fd: number;
  try {
    fd = openSync(file, C.O_WRONLY | C.O_APPEND | C.O_CREAT | C.O_NOFOLLOW | C.O_NONBLOCK, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') throw new NotRegularFileError(file, 'symlink');
    if (code === 'ENXIO') throw new NotRegularFileError(file, 'FIFO');
    throw err;
  }
  try {
    const refused = refusedKind(fstatSync(fd));
    if (refused) throw new NotRegularFileError(file, refused);
    const bytes = Buffer.from(`${line}\n`, 'utf8');
    const written = writeSync(fd, bytes, 0, bytes.length);
    if (written < bytes.length) throw new Error(`${file}: the line was cut short (${written} of ${bytes.length} bytes written)`);
  } finally {
    closeSync(fd);
  }
}
