// Claude Code Bash capture, the hook side: PreToolUse creates the capture file
// and rewrites the command (bash-capture.ts); the wrapped command's finish
// step digests a large capture and records it in the manifest; the Post hooks
// only step in when the command never reached its finish step (killed by a
// timeout or an interrupt), handing the model a digest of what was captured.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { digestFile } from '../spill/digest';
import { LOCAL_RETRIEVAL_HINT, LocalSpillStore, sanitizeSegment } from '../spill/local-store';
import { openSpillStore } from '../spill/open-store';
import { readManifest } from '../spill/manifest';
import { DEFAULT_DIGEST_BYTES, DEFAULT_MAX_INLINE_BYTES, labelFor, MIN_DIGEST_BYTES } from '../spill/policy';
import type { SpillLogger } from '../spill/types';
import { truncateUtf8 } from '../spill/text';
import { captureFileOf, shellQuote, whyNotCapturable, whyShellRejects, wrapBashCommand, wrappedCommandOf } from './bash-capture';
import { bashAllowedWhole } from './claude-code-permissions';
import { CLAUDE_CODE_SPILL_FOLDER, claudeSessionDir, claudeSpillDir, type PostToolUseEvent, type PostToolUseFailureEvent, type PreToolUseEvent } from './claude-code-event';

/**
 * When to rewrite Bash commands. Claude Code checks permission rules against
 * the rewritten command, whose prologue an allow rule such as `Bash(npm test:*)`
 * does not name (it would ask), so by default (`auto`) only sessions where every
 * Bash command runs unasked are captured: `bypassPermissions`, or rules that
 * allow Bash whole (`--allowedTools Bash`). `bypass`: only `bypassPermissions`.
 */
export type BashCaptureMode = 'auto' | 'bypass' | 'always' | 'never';

export interface BashCaptureOptions {
  /** Default `auto`. */
  captureBash?: BashCaptureMode;
  maxInlineBytes?: number;
  digestBytes?: number;
  /**
   * Shell words that run `spillway ... bash-finish`; the capture file, the
   * exit status and the command are appended. Without it nothing is wrapped.
   */
  finishCommand?: string;
  logger?: SpillLogger;
}

/** The object Claude Code reads from a PreToolUse hook that rewrites the command. */
export interface PreToolUseRewrite {
  hookSpecificOutput: { hookEventName: 'PreToolUse'; updatedInput: Record<string, unknown> };
}

/** The object Claude Code reads from a PostToolUseFailure hook: text the model gets right after the failure. */
export interface PostToolUseFailureContext {
  hookSpecificOutput: { hookEventName: 'PostToolUseFailure'; additionalContext: string };
}

const CAPTURE_PREFIX = 'bash-';

export function captureModeFromEnv(raw: string | undefined): BashCaptureMode | undefined {
  const v = raw?.trim().toLowerCase();
  return v === 'auto' || v === 'bypass' || v === 'always' || v === 'never' ? v : undefined;
}

/** The finish step as this very process would run it: same Node, same script. */
export function finishCommandFor(script: string, viaCli: boolean, digestBytes: number, nodePath: string = process.execPath): string {
  const words = viaCli ? ['hook', 'claude-code', 'bash-finish'] : ['claude-code', 'bash-finish'];
  return [nodePath, path.resolve(script), ...words, String(digestBytes)].map(shellQuote).join(' ');
}

/** PreToolUse: the rewritten Bash input, or undefined to run the command as it is. */
export async function captureRewrite(event: PreToolUseEvent, opts: BashCaptureOptions): Promise<PreToolUseRewrite | undefined> {
  if (event.tool_name !== 'Bash' || !opts.finishCommand) return undefined;
  if (!(await capturesIn(event, opts.captureBash ?? 'auto'))) return undefined;
  const input = event.tool_input;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const command = (input as { command?: unknown }).command;
  if (typeof command !== 'string') return undefined;
  const why = whyNotCapturable(command) ?? whyShellRejects(command);
  if (why) {
    opts.logger?.debug?.(`Bash command left unwrapped: ${why}`);
    return undefined;
  }
  const store = storeFor(claudeSessionDir(event), claudeSpillDir(event), opts.logger);
  let captureFile: string;
  try {
    captureFile = await store.createEmpty({ sessionId: event.session_id }, `${CAPTURE_PREFIX}${event.tool_use_id}.txt`);
  } catch (err) {
    opts.logger?.warn(`could not create a capture file, Bash command left unwrapped: ${(err as Error).message}`);
    return undefined;
  }
  const wrapped = wrapBashCommand(command, {
    captureFile,
    inlineBytes: opts.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES,
    finishCommand: opts.finishCommand,
  });
  const fields = input as Record<string, unknown>;
  // Claude Code names a command moved to the background by its description, else by its command: the
  // wrapper's shell must not be what the model reads in the task's notices, so one is given from the command.
  const description = typeof fields.description === 'string' && fields.description.trim() !== '' ? {} : { description: describeCommand(command) };
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { ...fields, command: wrapped, ...description } } };
}

/** Whether `mode` captures this session's commands (see BashCaptureMode); plan mode runs none to capture. */
async function capturesIn(event: PreToolUseEvent, mode: BashCaptureMode): Promise<boolean> {
  if (mode === 'always' || mode === 'never') return mode === 'always';
  if (event.permission_mode === 'bypassPermissions') return true;
  return mode === 'auto' && event.permission_mode !== 'plan' && (await bashAllowedWhole(event.cwd));
}

/** A command as a one-line description (its first line, at most 100 bytes). */
function describeCommand(command: string): string {
  const line = command.trim().split('\n')[0]!.trim();
  const short = truncateUtf8(line, 100);
  return short === line && !command.trim().includes('\n') ? short : `${truncateUtf8(line, 97)}…`;
}

/**
 * The finish step, run by the wrapped command after it ended (`spillway hook
 * claude-code bash-finish DIGEST_BYTES FILE STATUS COMMAND`): records the
 * capture in the session's manifest and returns what the model sees.
 * STATUS is the exit code; `ended` when a signal ended the shell during the
 * command; or `killed` / `interrupted` / `running` when the Post hooks digest
 * a capture the command did not finish itself.
 */
export async function finishCapture(file: string, status: string, command: string, digestBytes: number, logger?: SpillLogger): Promise<string> {
  const where = captureLocation(file);
  if (!where) throw new Error(`not a Spillway capture file: ${file}`);
  const digest = await digestFile(file, {
    budgetBytes: Math.max(MIN_DIGEST_BYTES, digestBytes),
    toolName: 'Bash',
    locator: file,
    retrievalHint: LOCAL_RETRIEVAL_HINT,
  });
  // A command still running records itself when it ends.
  if (status !== 'running') {
    try {
      await storeFor(where.sessionDir, where.spillDir, logger).recordExternal({
        owner: { sessionId: where.sessionId },
        source: { toolName: 'Bash', callId: where.toolUseId, label: labelFor({ command }) },
        file: path.basename(file),
        args: { command },
      });
    } catch (err) {
      // The digest still names the file; only the catalog loses the tool name.
      logger?.warn(`could not record ${file} in the manifest: ${(err as Error).message}`);
    }
  }
  return `${digest}${digest.endsWith('\n') ? '' : '\n'}${trailer(status, file)}\n`;
}

function trailer(status: string, file: string): string {
  if (/^\d+$/.test(status)) return `[spillway: the command exited with code ${status}; its complete output (stdout and stderr) is in ${file}]`;
  if (status === 'ended') return `[spillway: the shell ended before the command finished (a signal, such as a kill or a timeout); all it printed (stdout and stderr) is in ${file}]`;
  if (status === 'running') return `[spillway: the command is still running; its output so far (stdout and stderr) is in ${file}, and all of it will be when it ends]`;
  return `[spillway: the command was stopped (${status}); all it printed (stdout and stderr) is in ${file}]`;
}

/**
 * PostToolUse / PostToolUseFailure of a wrapped command: a digest of the
 * capture when the command never reached its finish step (killed or
 * interrupted; or moved to the background by its timeout, so still running),
 * undefined otherwise (its own output already is what the model should see).
 * A command started in the background is left alone: the model reads its
 * output file, where the wrapper puts the digest when it ends.
 */
export async function unfinishedCaptureDigest(event: PostToolUseEvent | PostToolUseFailureEvent, opts: BashCaptureOptions): Promise<string | undefined> {
  const input = event.tool_input as { command?: unknown; run_in_background?: unknown } | undefined;
  const file = captureFileOf(input?.command);
  if (!file || input?.run_in_background === true) return undefined;
  const where = captureLocation(file);
  // Only the capture this session's PreToolUse made for this very call.
  if (!where || where.sessionDir !== path.resolve(claudeSessionDir(event)) || where.toolUseId !== event.tool_use_id) return undefined;
  const st = await fsp.lstat(file).catch(() => undefined);
  if (!st?.isFile()) return undefined; // removed: the output was small and went through unchanged
  const { records } = await readManifest(where.spillDir);
  if (records.some((r) => r.file === path.basename(file))) return undefined; // finished
  const command = wrappedCommandOf(input?.command) ?? '';
  const status = stillRunning(event) ? 'running' : event.hook_event_name === 'PostToolUseFailure' && event.is_interrupt ? 'interrupted' : 'killed';
  if (st.size === 0 && status !== 'running') {
    // Nothing captured: the command's output went straight to Claude Code (a sandbox that would not let the shell
    // write the file), or it printed nothing before it was stopped. What Claude Code shows is all there is.
    await fsp.rm(file, { force: true }).catch(() => undefined);
    return undefined;
  }
  const digest = await finishCapture(file, status, command, opts.digestBytes ?? DEFAULT_DIGEST_BYTES, opts.logger);
  const lead = status === 'running' ? 'the command is still running (moved to the background); what it printed so far' : `the command ended before it could hand back its output (${status}); what it printed until then`;
  return `[spillway: ${lead}:]\n${digest}`;
}

/** Claude Code moved a command that outran its timeout to the background: the response names the task. */
function stillRunning(event: PostToolUseEvent | PostToolUseFailureEvent): boolean {
  if (event.hook_event_name !== 'PostToolUse') return false;
  const response = event.tool_response as { backgroundTaskId?: unknown } | undefined;
  return typeof response?.backgroundTaskId === 'string';
}

interface CaptureLocation {
  sessionDir: string;
  spillDir: string;
  sessionId: string;
  toolUseId: string;
}

/** `<sessionDir>/spillway/bash-<tool_use_id>.txt`, or undefined for any other path. */
function captureLocation(file: string): CaptureLocation | undefined {
  if (!path.isAbsolute(file)) return undefined;
  const resolved = path.resolve(file);
  const name = path.basename(resolved);
  const spillDir = path.dirname(resolved);
  if (path.basename(spillDir) !== CLAUDE_CODE_SPILL_FOLDER || !name.startsWith(CAPTURE_PREFIX) || !name.endsWith('.txt')) return undefined;
  const toolUseId = name.slice(CAPTURE_PREFIX.length, -'.txt'.length);
  if (toolUseId === '' || sanitizeSegment(`${CAPTURE_PREFIX}${toolUseId}.txt`) !== name) return undefined;
  const sessionDir = path.dirname(spillDir);
  return { sessionDir, spillDir, sessionId: path.basename(sessionDir), toolUseId };
}

function storeFor(sessionDir: string, spillDir: string, logger: SpillLogger | undefined): LocalSpillStore {
  // Root = the session folder, as for every other Claude Code blob.
  return openSpillStore({ root: sessionDir, layout: { dirFor: () => spillDir }, ...(logger ? { logger } : {}) });
}
