// Per result: leave it alone, or write it in full and hand the model a digest.
//
// Order (each step can only make the result leave unchanged): read-like and
// protected tools -> non-text -> threshold -> session -> dedup -> write ->
// digest. The model-facing output changes only after the write (or an alias
// to an earlier identical blob) succeeded; any failure returns the original
// value itself and says why. Never throws.
import { checkSizes } from './checked-options';
import { digestFile, digestText, digestValue } from './digest';
import { isReadLikeTool, normalizeToolName } from './salience';
import { sha256Hex, truncateUtf8, utf8Bytes } from './text';
import type { SaveTextSpill, SpillLogger, SpillRef, SpillSource, SpillStore, StagedSpill } from './types';
import { classifyOutput, planValueDigest, renderValueBlob } from './value';

/**
 * Results above this many UTF-8 bytes are spilled: the knee of the measured size distribution
 * (bench/spill-recovery; docs/engine.md, "Choosing the defaults").
 */
export const DEFAULT_MAX_INLINE_BYTES = 4096;
/** What a spilled result keeps in context, notice included (see docs/engine.md). */
export const DEFAULT_DIGEST_BYTES = 2048;
/** Floor for a configured digest size. The notice alone takes ~300-450 bytes with a long path; below that the digest is the notice alone. */
export const MIN_DIGEST_BYTES = 256;

export interface SpillRequest {
  sessionId: string;
  toolName: string;
  toolCallId: string;
  args?: unknown;
  /** A string or a JSON value (e.g. Bash's `{stdout, stderr, interrupted}`). */
  output: unknown;
  turn?: number;
}

/** `output` is the original value itself (===). */
type KeptDecision = { spilled: false; output: unknown; reason: string };

export type SpillDecision =
  | KeptDecision
  /** `output` has the original's shape: a string digest, or the same JSON with digested leaves. */
  | { spilled: true; output: unknown; ref: SpillRef; aliased: boolean };

/** A text output too big to hold, staged whole by the store as it arrived (`SpillStore.stage`). */
export interface StagedSpillRequest extends Omit<SpillRequest, 'output'> {
  staged: StagedSpill;
}

/**
 * As `SpillDecision`; a kept output is the staged bytes, which the caller hands
 * back as they are, from the temp or from `from` when the temp became a blob.
 */
export type StagedDecision = { spilled: false; reason: string; from?: string } | { spilled: true; output: string; ref: SpillRef; aliased: boolean };

export interface SpillPolicyOptions {
  store: SpillStore;
  maxInlineBytes?: number;
  digestBytes?: number;
  /** Tool names never spilled, on top of the read-like ones (compared case- and separator-insensitively). */
  protectedTools?: string[];
  logger?: SpillLogger;
}

export interface SpillPolicy {
  apply(req: SpillRequest): Promise<SpillDecision>;
  /** The same decision for a staged output (saved from its temp, its digest streamed from the blob). Never throws. */
  applyStaged(req: StagedSpillRequest): Promise<StagedDecision>;
}

/** In-process dedup memory, for stores without a lookup of their own (bounded). */
const MEMO_LIMIT = 1024;

export function createSpillPolicy(opts: SpillPolicyOptions): SpillPolicy {
  checkSizes(opts, ['maxInlineBytes', 'digestBytes']);
  const maxInline = Math.max(0, Math.floor(opts.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES));
  const digestBytes = Math.max(MIN_DIGEST_BYTES, Math.floor(Math.min(opts.digestBytes ?? DEFAULT_DIGEST_BYTES, Math.max(maxInline, MIN_DIGEST_BYTES))));
  const protectedTools = new Set((opts.protectedTools ?? []).map(normalizeToolName));
  const { store, logger } = opts;
  const memo = new Map<string, SpillRef>();

  const keep = (output: unknown, reason: string): KeptDecision => ({ spilled: false, output, reason });

  async function decide(req: SpillRequest): Promise<SpillDecision> {
    const { output, toolName } = req;
    if (isReadLikeTool(toolName)) return keep(output, `read-like tool ${toolName} is never spilled`);
    if (protectedTools.has(normalizeToolName(toolName))) return keep(output, `protected tool ${toolName}`);

    const shape = classifyOutput(output);
    if (shape.kind === 'non-text') return keep(output, `non-text output (${shape.why})`);
    const bytes = shape.kind === 'text' ? utf8Bytes(shape.text) : utf8Bytes(JSON.stringify(output));
    if (bytes <= maxInline) return keep(output, `at or below the threshold (${bytes} <= ${maxInline} bytes)`);

    let content: string;
    if (shape.kind === 'text') {
      if (bytes <= digestBytes) return keep(output, 'a digest would not be smaller');
      content = shape.text;
    } else {
      const plan = planValueDigest(shape.leaves, digestBytes);
      if (plan.digested.length === 0 && plan.emptied.length === 0) return keep(output, 'its text fields already fit the digest budget');
      content = renderValueBlob(output, plan);
    }

    if (!req.sessionId) return noSession(req);
    const sha256 = sha256Hex(content);
    const { ref, aliased } = await saveOnce(req, sha256, (saveInput) => store.saveText({ ...saveInput, content }));
    const digestOpts = { budgetBytes: digestBytes, toolName, locator: ref.locator, retrievalHint: ref.retrievalHint };
    const digested = shape.kind === 'text' ? digestText(shape.text, digestOpts) : digestValue(output, digestOpts);
    logger?.debug?.(`${toolName} ${req.toolCallId}: ${bytes} bytes ${aliased ? 'aliased to' : 'spilled to'} ${ref.locator}`);
    return { spilled: true, output: digested, ref, aliased };
  }

  /** The staged counterpart of `decide`: same rules, the digest read from the blob. */
  async function decideStaged(req: StagedSpillRequest): Promise<StagedDecision> {
    const { staged, toolName } = req;
    if (isReadLikeTool(toolName)) return { spilled: false, reason: `read-like tool ${toolName} is never spilled` };
    if (protectedTools.has(normalizeToolName(toolName))) return { spilled: false, reason: `protected tool ${toolName}` };
    if (!staged.text) return { spilled: false, reason: 'non-text output (not UTF-8 at the start)' };
    if (staged.bytes <= Math.max(maxInline, digestBytes)) return { spilled: false, reason: `at or below the threshold (${staged.bytes} <= ${maxInline} bytes)` };
    if (!req.sessionId) return noSession(req);
    const { saveStaged } = store;
    if (!saveStaged) return { spilled: false, reason: 'the store cannot save a staged text' };
    const { ref, aliased } = await saveOnce(req, staged.sha256, (saveInput) => saveStaged.call(store, staged, saveInput));
    let digested: string;
    try {
      digested = await digestFile(ref.locator, { budgetBytes: digestBytes, toolName, locator: ref.locator, retrievalHint: ref.retrievalHint });
    } catch (err) {
      // The temp is the blob now: the output is read back from there.
      return { spilled: false, reason: failed(req, err), from: ref.locator };
    }
    logger?.debug?.(`${toolName} ${req.toolCallId}: ${staged.bytes} bytes ${aliased ? 'aliased to' : 'spilled to'} ${ref.locator}`);
    return { spilled: true, output: digested, ref, aliased };
  }

  function noSession(req: { toolName: string; toolCallId: string; output?: unknown }): KeptDecision {
    logger?.warn(`${req.toolName} ${req.toolCallId}: no session id, result left inline`);
    return keep(req.output, 'no session id');
  }

  /**
   * The blob for a body of `sha256`: an earlier identical one of the session
   * (recorded as an alias), else what `save` writes. A store that can look
   * blobs up is asked every time (it sees deletions and other processes),
   * holding its lock for this body when it has one so that concurrent spills
   * of one body write it once; the in-process memory serves stores that
   * cannot look up.
   */
  async function saveOnce(
    req: Omit<SpillRequest, 'output'>,
    sha256: string,
    save: (input: Omit<SaveTextSpill, 'content'>) => Promise<SpillRef>,
  ): Promise<{ ref: SpillRef; aliased: boolean }> {
    const owner = { sessionId: req.sessionId };
    const source: SpillSource = { toolName: req.toolName, callId: req.toolCallId, label: labelFor(req.args) };
    const memoKey = `${req.sessionId}\0${sha256}`;
    const extra = { ...(req.args !== undefined ? { args: req.args } : {}), ...(req.turn !== undefined ? { turn: req.turn } : {}) };
    const lookUpThenSave = async (): Promise<{ ref: SpillRef; aliased: boolean }> => {
      const earlier = store.findBySha256 ? await findEarlier(owner, sha256) : memo.get(memoKey);
      if (earlier) {
        const original = { ...earlier, sha256 };
        await store.recordAlias?.({ owner, source, original, ...extra }).catch((err: unknown) => {
          logger?.warn(`alias record failed: ${describe(err)}`);
        });
        return { ref: earlier, aliased: true };
      }
      return { ref: await save({ owner, source, suggestedName: `${req.toolName}-${req.toolCallId}.txt`, ...extra }), aliased: false };
    };
    const saved = store.withContentLock ? await store.withContentLock(owner, sha256, lookUpThenSave) : await lookUpThenSave();
    remember(memoKey, saved.ref);
    return saved;
  }

  async function findEarlier(owner: { sessionId: string }, sha256: string): Promise<SpillRef | undefined> {
    if (!store.findBySha256) return undefined;
    try {
      return await store.findBySha256(owner, sha256);
    } catch (err) {
      logger?.warn(`dedup lookup failed, writing a new blob: ${describe(err)}`);
      return undefined;
    }
  }

  function remember(key: string, ref: SpillRef): void {
    memo.delete(key);
    memo.set(key, ref);
    if (memo.size > MEMO_LIMIT) memo.delete(memo.keys().next().value as string);
  }

  function failed(req: { toolName: string; toolCallId: string } | undefined, err: unknown): string {
    const why = describe(err);
    logger?.warn(`${req?.toolName} ${req?.toolCallId}: spill failed, result left inline: ${why}`);
    return `spill failed: ${why}`;
  }

  return {
    async apply(req: SpillRequest): Promise<SpillDecision> {
      try {
        return await decide(req);
      } catch (err) {
        return keep(req?.output, failed(req, err));
      }
    },
    async applyStaged(req: StagedSpillRequest): Promise<StagedDecision> {
      try {
        return await decideStaged(req);
      } catch (err) {
        return { spilled: false, reason: failed(req, err) };
      }
    },
  };
}

function describe(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; message?: unknown };
    const msg = typeof e.message === 'string' ? e.message : String(err);
    return typeof e.code === 'string' && !msg.startsWith(e.code) ? `${e.code}: ${msg}` : msg;
  }
  return String(err);
}

/** A short human label for the manifest/browser: the command, path, pattern or URL. */
export function labelFor(args: unknown): string {
  if (args === undefined || args === null) return '';
  if (typeof args === 'string') return truncateUtf8(args, 200);
  if (typeof args === 'object') {
    const o = args as Record<string, unknown>;
    for (const k of ['command', 'file_path', 'path', 'pattern', 'url', 'query']) {
      if (typeof o[k] === 'string') return truncateUtf8(o[k] as string, 200);
    }
  }
  try {
    return truncateUtf8(JSON.stringify(args) ?? '', 200);
  } catch {
    return '';
  }
}
