// The pi extension: eager spill of oversized tool
// results in `tool_result`, and a budget-delta flush in `turn_end` that spills
// a turn's medium results durably (context_edit) when that turn alone ate a
// large share of the window. Blobs live beside the session file in
// `<sessionDir>/<sessionId>-blobs/` with Spillway's manifest; an index entry
// (`pi.appendEntry`) per spill lets a reopened session resolve every one.
//
// Loaded by pi from this package's `"pi": {"extensions": [...]}` entry. Only
// pi's *types* are imported, so nothing of pi is bundled or loaded from here.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type {
  ExtensionAPI,
  ExtensionContext,
  ToolResultEvent,
  ToolResultEventResult,
  TurnEndEvent,
  TurnEndEventResult,
} from '@earendil-works/pi-coding-agent' with { 'resolution-mode': 'import' };
import { formatCount } from '../common/format-count';
import { isPiOutputPath } from '../catalog/sources/pi-output-files';
import { BudgetTracker } from '../spill/budget';
import { checkFraction, checkSizes } from '../spill/checked-options';
import { digestFile } from '../spill/digest';
import { hashAndCount, LOCAL_RETRIEVAL_HINT, type LocalSpillStore } from '../spill/local-store';
import { isMirrored, openSpillStore } from '../spill/open-store';
import { uploadQueuedInBackground } from '../spill/remote/configured';
import { createSpillPolicy, labelFor, MIN_DIGEST_BYTES, type SpillPolicy } from '../spill/policy';
import { refusedKind } from '../spill/regular-file';
import { countLines, sha256Hex, utf8Bytes } from '../spill/text';
import type { SpillLogger } from '../spill/types';
import { PI_SPILL_DEFAULTS, readPiSpillConfig, type PiSpillConfig } from './pi-config';

/** customType of the index entries this extension appends. */
export const PI_INDEX_ENTRY_TYPE = 'spillway-spill';

/** One spill as recorded in the session (never the full body: that is the blob's job). */
export interface PiSpillRecord {
  v: 1;
  toolCallId: string;
  toolName: string;
  args?: unknown;
  spillPath: string;
  spillBytes: number;
  spillLines: number;
  /** The digest the model saw (head, failure lines, tail), at most spillPreviewBytes. */
  resultPreview: string;
  /** sha256 of the full body, for dedup and integrity checks. */
  contentHash: string;
  /** True when an identical earlier result's blob was reused. */
  aliased: boolean;
  /** `eager` (tool_result) or `budget-delta` (turn_end). */
  trigger: 'eager' | 'budget-delta';
  /** pi's status line for a failed command ("Command exited with code 2"), kept in the stub. */
  status?: string;
  /** True when `spillPath` is pi's own full-output file (referenced, not copied). */
  external?: boolean;
}

type TextBlock = { type: 'text'; text: string };
type ContentBlock = { type: string };

export interface PiSpillExtensionOptions {
  /** Overrides pi's settings (tests, embedders); merged over the `spillway` settings key. */
  config?: Partial<PiSpillConfig>;
  logger?: SpillLogger;
}

/** The extension factory pi calls; `createPiSpillExtension()` makes one with options. */
export default function spillwayPiExtension(pi: ExtensionAPI): void {
  createPiSpillExtension()(pi);
}

export function createPiSpillExtension(options: PiSpillExtensionOptions = {}): (pi: ExtensionAPI) => void {
  checkSizes(options.config, ['spillThreshold', 'spillPreviewBytes', 'budgetFlushFloor'], 'config.');
  checkFraction('config.budgetTurnDelta', options.config?.budgetTurnDelta);
  return (pi) => {
    // Warnings go to pi's UI when there is one (stderr would garble the TUI).
    let uiCtx: ExtensionContext | undefined;
    const logger: SpillLogger = options.logger ?? {
      warn: (m) => {
        if (uiCtx?.hasUI) uiCtx.ui.notify(`spillway: ${m}`, 'warning');
        else process.stderr.write(`spillway: ${m}\n`);
      },
    };
    let config: PiSpillConfig = { ...PI_SPILL_DEFAULTS, ...options.config };
    const tracker = { current: new BudgetTracker({ delta: config.budgetTurnDelta }) };
    /** toolCallId -> record, rebuilt from the session's index entries on every session start. */
    const index = new Map<string, PiSpillRecord>();
    /** pi runs parallel tool calls' tool_result handlers at once: one dedup-and-write at a time per session. */
    const oneAtATime = keyedQueue();

    pi.on('session_start', (_event, ctx) => {
      uiCtx = ctx;
      config = { ...readPiSpillConfig(pi.getSettings(), logger.warn), ...options.config };
      // A new tracker per session start: the first turn after it cannot fire.
      tracker.current = new BudgetTracker({ delta: config.budgetTurnDelta });
      index.clear();
      for (const record of indexRecords(ctx)) index.set(record.toolCallId, record);
    });

    pi.on('tool_result', async (event, ctx): Promise<ToolResultEventResult | undefined> => {
      if (isProtected(config, event.toolName)) return undefined;
      const body = await bodyOf(event.content, event.details);
      if (body === undefined) return undefined;
      const input = { toolName: event.toolName, toolCallId: event.toolCallId, args: event.input, trigger: 'eager' as const, status: body.status };
      let record: PiSpillRecord | undefined;
      // A log under the threshold (pi cut many short lines) is left as pi showed it, as a short result would be.
      if (body.log) record = body.log.bytes >= config.spillThreshold ? await referenceLog(ctx, config, logger, body.log.path, input) : undefined;
      else if (body.text.length >= config.spillThreshold) {
        record = await spill(ctx, config, logger, oneAtATime, { ...input, body: body.text, floorChars: config.spillThreshold });
      }
      if (!record) return undefined;
      index.set(record.toolCallId, record);
      pi.appendEntry(PI_INDEX_ENTRY_TYPE, record);
      return replacementFor(event, record);
    });

    pi.on('turn_end', async (event: TurnEndEvent, ctx): Promise<TurnEndEventResult | undefined> => {
      const observation = tracker.current.observe(ctx.getContextUsage());
      if (!observation.delta) return undefined;
      const drafts: NonNullable<TurnEndEventResult['entries']> = [];
      for (let i = 0; i < event.toolResults.length; i++) {
        const message = event.toolResults[i]!;
        const entryId = event.toolResultEntryIds[i];
        if (!entryId || index.has(message.toolCallId) || isProtected(config, message.toolName)) continue;
        const body = await bodyOf(message.content, message.details);
        if (body === undefined) continue;
        const input = { toolName: message.toolName, toolCallId: message.toolCallId, args: argsOf(event, message.toolCallId), trigger: 'budget-delta' as const, status: body.status };
        let record: PiSpillRecord | undefined;
        if (body.log) record = await referenceLog(ctx, config, logger, body.log.path, input);
        else if (body.text.length >= config.budgetFlushFloor) {
          record = await spill(ctx, config, logger, oneAtATime, { ...input, body: body.text, floorChars: config.budgetFlushFloor });
        }
        if (!record) continue;
        index.set(record.toolCallId, record);
        drafts.push({ type: 'custom', customType: PI_INDEX_ENTRY_TYPE, data: record });
        drafts.push({ type: 'context_edit', targetId: entryId, replacement: { content: [{ type: 'text', text: renderStub(record) }] } });
      }
      if (drafts.length === 0) return undefined;
      logger.debug?.(`budget-delta flush at ${observation.fraction}: ${drafts.length / 2} result(s) spilled`);
      return { entries: [...event.entries, ...drafts] };
    });

    // The run's closing answer comes after its last tool result, so after the last spill: the session file goes
    // up again once the run has ended and pi has written it.
    pi.on('agent_end', async (_event, ctx) => {
      await queueSessionFile(ctx, logger);
    });
  };
}

function isProtected(config: PiSpillConfig, toolName: string): boolean {
  return config.protectedTools.includes(toolName);
}

/** pi's status paragraph after a failed command's output (see pi's `appendStatus`). */
const PI_STATUS = /\n\n(Command (?:exited with code -?\d+|aborted|timed out after [^\n]*|terminated without an exit code))$/;
/** pi's truncation notice names its full-output file (also in the text of a failure pi threw, which has no details). */
const PI_FULL_OUTPUT_NOTICE = /Full output: (\/[^\n\]]+)\]/;

interface ResultBody {
  /** What the tool returned, all text. */
  text: string;
  /** pi's own file with the whole output (a truncated bash result), when there is one, and its size. */
  log?: { path: string; bytes: number };
  status?: string;
}

/**
 * A result's text, or undefined when it is not all text (images are left
 * alone). pi's bash keeps only the tail in `content` and the whole output in
 * `details.fullOutputPath`; that file, when it is there, is the real body.
 */
async function bodyOf(content: readonly ContentBlock[], details: unknown): Promise<ResultBody | undefined> {
  if (!content.every((b) => b.type === 'text' && typeof (b as TextBlock).text === 'string')) return undefined;
  const text = (content as readonly TextBlock[]).map((b) => b.text).join('\n');
  const status = PI_STATUS.exec(text)?.[1];
  const log = fullOutputPathOf(details) ?? PI_FULL_OUTPUT_NOTICE.exec(text)?.[1];
  // Only pi's own log: its name, in the folder pi writes them to (the text may name any file, an echo included).
  if (!log || !isPiOutputPath(log) || path.dirname(log) !== path.resolve(os.tmpdir())) return { text, ...(status ? { status } : {}) };
  const stat = await fsp.lstat(log).catch(() => undefined);
  const bytes = stat && !refusedKind(stat) ? stat.size : undefined;
  return { text, ...(bytes !== undefined ? { log: { path: log, bytes } } : {}), ...(status ? { status } : {}) };
}

function fullOutputPathOf(details: unknown): string | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const d = details as { fullOutputPath?: unknown; truncation?: { truncated?: unknown } };
  if (typeof d.fullOutputPath !== 'string' || !path.isAbsolute(d.fullOutputPath)) return undefined;
  if (d.truncation && d.truncation.truncated === false) return undefined;
  return d.fullOutputPath;
}

/**
 * pi already wrote the whole output to its own file: point the model at that
 * file with a digest streamed from it, and store nothing a second time (the
 * catalog lists pi's file once, from the result's `details.fullOutputPath`).
 */
async function referenceLog(
  ctx: ExtensionContext,
  config: PiSpillConfig,
  logger: SpillLogger,
  log: string,
  input: Pick<PiSpillRecord, 'toolName' | 'toolCallId' | 'args' | 'trigger' | 'status'>,
): Promise<PiSpillRecord | undefined> {
  if (!ctx.sessionManager.getSessionFile()) return undefined;
  try {
    const facts = await hashAndCount(log);
    const preview = await digestFile(log, {
      budgetBytes: Math.max(MIN_DIGEST_BYTES, config.spillPreviewBytes),
      toolName: input.toolName,
      locator: log,
      retrievalHint: LOCAL_RETRIEVAL_HINT,
    });
    return {
      v: 1,
      toolCallId: input.toolCallId,
      toolName: input.toolName,
      ...(input.args !== undefined ? { args: input.args } : {}),
      spillPath: log,
      spillBytes: facts.bytes,
      spillLines: facts.lines,
      resultPreview: preview,
      contentHash: facts.sha256,
      aliased: false,
      trigger: input.trigger,
      ...(input.status ? { status: input.status } : {}),
      external: true,
    };
  } catch (err) {
    logger.warn(`full output ${log} unreadable, result left as pi returned it: ${(err as Error).message}`);
    return undefined;
  }
}

interface SpillInput {
  toolName: string;
  toolCallId: string;
  args: unknown;
  body: string;
  trigger: PiSpillRecord['trigger'];
  status?: string | undefined;
  /** The caller's size floor in chars (the engine's threshold is in bytes, set just under it). */
  floorChars: number;
}

/** Runs tasks one after another per key; a failed task does not hold up the next. */
type KeyedQueue = <T>(key: string, task: () => Promise<T>) => Promise<T>;

function keyedQueue(): KeyedQueue {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(task, task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}

/**
 * Write (or alias) the blob through the engine; undefined leaves the result as
 * it is. The engine's dedup looks the body up in the manifest, then writes:
 * two identical results of one session in flight together would both miss and
 * both write, so each session's lookups and writes go through `queue`.
 */
async function spill(ctx: ExtensionContext, config: PiSpillConfig, logger: SpillLogger, queue: KeyedQueue, input: SpillInput): Promise<PiSpillRecord | undefined> {
  const sessionDir = ctx.sessionManager.getSessionDir();
  const sessionId = ctx.sessionManager.getSessionId();
  if (!sessionDir || !sessionId || !ctx.sessionManager.getSessionFile()) {
    logger.debug?.(`no session file: ${input.toolName} result left inline`);
    return undefined;
  }
  const store = storeFor(sessionDir, logger);
  const policy = policyFor(store, config, input.floorChars, logger);
  const request = { sessionId, toolName: input.toolName, toolCallId: input.toolCallId, args: input.args, output: input.body };
  const decision = await queue(`${path.resolve(sessionDir)}\0${sessionId}`, () => policy.apply(request));
  if (!decision.spilled || typeof decision.output !== 'string') return undefined;
  await queueSessionFile(ctx, logger);
  return {
    v: 1,
    toolCallId: input.toolCallId,
    toolName: input.toolName,
    ...(input.args !== undefined ? { args: input.args } : {}),
    spillPath: decision.ref.locator,
    spillBytes: decision.ref.bytes,
    spillLines: decision.ref.lines ?? countLines(input.body),
    resultPreview: decision.output,
    contentHash: decision.ref.sha256 ?? sha256Hex(input.body),
    aliased: decision.aliased,
    trigger: input.trigger,
    ...(input.status ? { status: input.status } : {}),
  };
}

/** `<sessionDir>/<sessionId>-blobs/`, as pi-condense lays them out; the session folder is the store root. */
function storeFor(sessionDir: string, logger: SpillLogger): LocalSpillStore {
  const root = path.resolve(sessionDir);
  return openSpillStore({ root, layout: { dirFor: (owner) => path.join(root, `${owner.sessionId}-blobs`) }, agent: 'pi', logger });
}

/**
 * A session with blobs in a bucket sends its session file too (its turns, for the chart and attribution): after
 * each spill, and at the end of each run. Copies go up in a process of their own, not waited for.
 */
async function queueSessionFile(ctx: ExtensionContext, logger: SpillLogger): Promise<void> {
  const sessionDir = ctx.sessionManager.getSessionDir();
  const sessionId = ctx.sessionManager.getSessionId();
  const file = ctx.sessionManager.getSessionFile();
  if (!sessionDir || !sessionId || !file) return;
  try {
    const store = storeFor(sessionDir, logger);
    if (isMirrored(store) && store.queueTranscriptIfSpilled(sessionId, file)) await uploadQueuedInBackground(process.env);
  } catch (err) {
    logger.warn(`session file not queued for the bucket: ${(err as Error).message}`);
  }
}

function policyFor(store: LocalSpillStore, config: PiSpillConfig, floorChars: number, logger: SpillLogger): SpillPolicy {
  return createSpillPolicy({
    store,
    // chars <= UTF-8 bytes, so a body of >= floorChars chars is always over this.
    maxInlineBytes: Math.max(0, floorChars - 1),
    digestBytes: config.spillPreviewBytes,
    protectedTools: config.protectedTools,
    logger,
  });
}

/** What the model sees instead of the result: mechanical, no model call. */
export function renderStub(record: PiSpillRecord): string {
  const args = labelFor(record.args);
  const same = record.aliased ? ' (identical to an earlier result; same file)' : '';
  return [
    `[spillway] ${record.toolName}${args ? ` (${args})` : ''} returned ${formatCount(record.spillBytes)} bytes, ${formatCount(record.spillLines)} lines.`,
    `Full output saved to ${record.spillPath}${same}.`,
    `Read it with the read tool using offset/limit (or grep it) instead of re-running the command.`,
    `Preview (${formatCount(utf8Bytes(record.resultPreview))} bytes: head, failure lines, tail):`,
    record.resultPreview,
    // pi's exit status; the digest's tail already ends with it when the body was pi's own text.
    ...(record.status && !record.resultPreview.trimEnd().endsWith(record.status) ? ['', record.status] : []),
  ].join('\n');
}

/**
 * The stub replaces the content; the details keep their facts but lose pi's
 * second copy of the output (`truncation.content`), so the body is stored
 * nowhere in the session file. Structured output keeps its shape with the
 * stub as its text.
 */
function replacementFor(event: ToolResultEvent, record: PiSpillRecord): ToolResultEventResult {
  const stub = renderStub(record);
  const result: ToolResultEventResult = { content: [{ type: 'text', text: stub }], details: scrubDetails(event.details, record), isError: event.isError };
  const sc = event.structuredContent;
  if (typeof sc === 'object' && sc !== null && !Array.isArray(sc) && typeof (sc as Record<string, unknown>).output === 'string') {
    result.structuredContent = { ...(sc as Record<string, unknown>), output: stub } as ToolResultEventResult['structuredContent'];
  }
  return result;
}

function scrubDetails(details: unknown, record: PiSpillRecord): unknown {
  const spill = { spillway: { path: record.spillPath, bytes: record.spillBytes, sha256: record.contentHash } };
  if (typeof details !== 'object' || details === null || Array.isArray(details)) return details === undefined ? spill : details;
  const copy: Record<string, unknown> = { ...(details as Record<string, unknown>), ...spill };
  const truncation = copy.truncation;
  if (typeof truncation === 'object' && truncation !== null && 'content' in truncation) {
    const { content: _dropped, ...rest } = truncation as Record<string, unknown>;
    copy.truncation = rest;
  }
  return copy;
}

function argsOf(event: TurnEndEvent, toolCallId: string): unknown {
  const message = event.message as { role?: string; content?: unknown };
  if (message.role !== 'assistant' || !Array.isArray(message.content)) return undefined;
  for (const block of message.content as Array<{ type?: string; id?: string; arguments?: unknown }>) {
    if (block.type === 'toolCall' && block.id === toolCallId) return block.arguments;
  }
  return undefined;
}

/** Index records on the current branch, oldest first (abandoned branches do not count). */
function indexRecords(ctx: ExtensionContext): PiSpillRecord[] {
  const out: PiSpillRecord[] = [];
  for (const entry of ctx.sessionManager.getBranch()) {
    if (entry.type !== 'custom' || entry.customType !== PI_INDEX_ENTRY_TYPE) continue;
    const data = entry.data as Partial<PiSpillRecord> | undefined;
    if (data && typeof data.toolCallId === 'string' && typeof data.spillPath === 'string') out.push(data as PiSpillRecord);
  }
  return out;
}

/** Look up a spill by tool call id (used by tests and embedders after a restart). */
export function resolveSpill(ctx: Pick<ExtensionContext, 'sessionManager'>, toolCallId: string): PiSpillRecord | undefined {
  return indexRecords(ctx as ExtensionContext).find((r) => r.toolCallId === toolCallId);
}
