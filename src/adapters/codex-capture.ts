// Codex CLI shell capture. Codex shows the model ~10,000 tokens of a command's
// output (head and tail; of a 5 MB output only the first MiB is even
// considered) and keeps no copy, and its PostToolUse hook gets the output
// already cut. So the PreToolUse hook rewrites the command (`updatedInput`)
// into a wrapper that runs it as typed, in a subshell of the same login shell,
// with its whole output (stdout and stderr, in order) going to a private file;
// when it ends, an output of at most `inlineBytes` is printed back byte for
// byte and the file removed, a larger one becomes Spillway's digest (head,
// failure lines with their line numbers, tail, the exit code, the file's final
// path), and the wrapper exits with the command's status. The file is made in
// a private temporary folder (codex-staging.ts: Codex's sandbox lets a command
// write there, not in $CODEX_HOME) and moved to its final path by the next hook
// (codex-mover.ts), which runs outside the sandbox. Where no file can be made
// (`-s read-only`), the output streams through the digest on a pipe instead
// (codex-pipe-digest.ts): the same digest and exit code, nothing kept. Codex judges the command
// it runs, the wrapper: a command the user's rules or Codex's own checks would
// refuse or ask about is never rewritten (codex-rules.ts).
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { digestFile } from '../spill/digest';
import { LOCAL_RETRIEVAL_HINT } from '../spill/local-store';
import { isMirrored } from '../spill/open-store';
import { remoteHint } from '../spill/remote/mirrored-store';
import { hashAndCount } from '../spill/save-record';
import { DEFAULT_DIGEST_BYTES, DEFAULT_MAX_INLINE_BYTES, MIN_DIGEST_BYTES } from '../spill/policy';
import type { SpillLogger } from '../spill/types';
import { ansiCQuote, shellQuote } from './shell-quote';
import { whyShellRejects, wrapperTool } from './shell-tools';
import { codexRuleFolders, looksLikeForcedRm, readCodexRules, restrictiveRuleMatch } from './codex-rules';
import { type CaptureLocation, captureFileName, codexCaptureLocation, codexSessionStore, finalCapturePath } from './codex-final-path';
import { moveCodexCaptures } from './codex-mover';
import { DONE_SUFFIX, makeStagingFolder } from './codex-staging';

/** Every wrapper starts so: how a wrapped command is recognised. */
export const CODEX_CAPTURE_MARKER = '__spillway_f=';
/** Linux takes no single argument over 128 KiB; the wrapper and Codex's own words need room too. */
const MAX_COMMAND_BYTES = 120 * 1024;

/** What Codex hands a PreToolUse or PostToolUse hook (the fields Spillway reads). */
export interface CodexToolEvent {
  hook_event_name: 'PreToolUse' | 'PostToolUse';
  session_id: string;
  tool_use_id: string;
  tool_name: string;
  tool_input: { command?: unknown } & Record<string, unknown>;
  cwd?: string;
  transcript_path?: string;
}

/** The main agent finished its turn (the fields Spillway reads): nothing about a tool. */
export interface CodexStopEvent {
  hook_event_name: 'Stop';
  session_id: string;
  cwd?: string;
  transcript_path?: string;
}

export type CodexHookEvent = CodexToolEvent | CodexStopEvent;

export interface CodexCaptureOptions {
  maxInlineBytes?: number;
  digestBytes?: number;
  /** Shell words that run the finish step; the capture file, its final path, the exit status and the command are appended. */
  finishCommand: string;
  /** Shell words of the digest on a pipe (see CodexWrapOptions). */
  digestCommand?: string;
  logger?: SpillLogger;
}

export interface CodexRewrite {
  hookSpecificOutput: { hookEventName: 'PreToolUse'; permissionDecision: 'allow'; updatedInput: Record<string, unknown> };
}

/** `$CODEX_HOME`, else the folder above the transcript's `sessions/`, else `~/.codex`. */
export function codexHomeOf(event: { transcript_path?: string }, env: NodeJS.ProcessEnv): string {
  const home = env.CODEX_HOME?.trim();
  if (home && path.isAbsolute(home)) return home;
  const transcript = event.transcript_path;
  if (transcript && path.isAbsolute(transcript)) {
    const at = transcript.lastIndexOf(`${path.sep}sessions${path.sep}`);
    if (at > 0) return transcript.slice(0, at);
  }
  return path.join(env.HOME?.trim() || os.homedir(), '.codex');
}

export function parseCodexEvent(text: string): CodexHookEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const e = value as Partial<CodexToolEvent> | Partial<CodexStopEvent> | null;
  if (!e || typeof e !== 'object' || typeof e.session_id !== 'string') return undefined;
  if (e.hook_event_name === 'Stop') return e as CodexStopEvent;
  if (e.hook_event_name !== 'PreToolUse' && e.hook_event_name !== 'PostToolUse') return undefined;
  if (typeof e.tool_use_id !== 'string' || typeof e.tool_name !== 'string') return undefined;
  if (typeof e.tool_input !== 'object' || e.tool_input === null || Array.isArray(e.tool_input)) return undefined;
  return e as CodexToolEvent;
}

/** Why the command is run as typed, or undefined when it may be wrapped. */
export async function whyCodexLeavesAlone(command: string, event: CodexToolEvent, codexHome: string): Promise<string | undefined> {
  if (command.trim() === '') return 'empty command';
  if (command.includes('\0')) return 'command holds a NUL byte';
  if (Buffer.byteLength(command) * 2 > MAX_COMMAND_BYTES) return 'command too long to wrap';
  const rules = await readCodexRules(codexRuleFolders(codexHome, event.cwd));
  // A rule file Spillway cannot read exactly as Codex does: Codex must judge the command itself.
  if (!rules.ok) return `rules not understood (${rules.why})`;
  const rule = restrictiveRuleMatch(command, rules.rules);
  if (rule) return `a rule says ${rule.decision} for ${rule.pattern.map((alts) => alts.join('|')).join(' ')}`;
  if (looksLikeForcedRm(command)) return 'Codex asks about or refuses rm with a force option';
  return whyShellRejects(command, 'bash');
}

/** PreToolUse: the rewrite, or undefined to leave the call as it is. */
export async function codexCaptureRewrite(event: CodexToolEvent, env: NodeJS.ProcessEnv, opts: CodexCaptureOptions): Promise<CodexRewrite | undefined> {
  if (event.tool_name !== 'Bash') return undefined;
  const command = event.tool_input.command;
  if (typeof command !== 'string') return undefined;
  const codexHome = codexHomeOf(event, env);
  const why = await whyCodexLeavesAlone(command, event, codexHome);
  if (why) {
    opts.logger?.debug?.(`command left as typed: ${why}`);
    return undefined;
  }
  let files: { captureFile: string; finalFile: string };
  try {
    files = await prepareCapture(codexHome, event, env);
  } catch (err) {
    opts.logger?.warn(`could not prepare the capture folder, command left as typed: ${(err as Error).message}`);
    return undefined;
  }
  const wrapped = wrapCodexCommand(command, {
    ...files,
    inlineBytes: opts.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES,
    finishCommand: opts.finishCommand,
    ...(opts.digestCommand ? { digestCommand: opts.digestCommand } : {}),
  });
  if (whyShellRejects(wrapped, 'bash')) return undefined;
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { ...event.tool_input, command: wrapped } } };
}

/**
 * The capture file's path, in a private temporary folder made for this call,
 * and its final path, whose session folder is made here (0700) so that a
 * $CODEX_HOME Spillway cannot write leaves the command as typed. The capture
 * file itself is made by the wrapper, when the command really runs: a command
 * Codex then refuses leaves nothing behind.
 */
async function prepareCapture(codexHome: string, event: CodexToolEvent, env: NodeJS.ProcessEnv): Promise<{ captureFile: string; finalFile: string }> {
  const finalFile = finalCapturePath(codexHome, event.session_id, event.tool_use_id);
  const where = codexCaptureLocation(finalFile);
  if (!where) throw new Error(`not a capture path: ${finalFile}`);
  const name = captureFileName(event.tool_use_id);
  // The store makes the folders safely (0700, no symlink on the way); the probe file it needs for that goes at once.
  const probe = await codexSessionStore(where.root, where.sessionDir).createEmpty({ sessionId: event.session_id }, `.probe-${process.pid}-${name}`);
  await fsp.unlink(probe);
  const folder = await makeStagingFolder(env, event.session_id, event.tool_use_id);
  return { captureFile: path.join(folder, name), finalFile };
}

export interface CodexWrapOptions {
  captureFile: string;
  /** Where the hook moves the capture; the digest names it. */
  finalFile: string;
  inlineBytes: number;
  finishCommand: string;
  /** Shell words of the digest on a pipe, for when the capture file cannot be made; without them the output then goes out as typed. */
  digestCommand?: string;
}

/**
 * The command Codex runs instead (in its `bash -lc`). The capture file is
 * created exclusively (noclobber, umask 077) when the command starts; where
 * it cannot be (Codex's read-only sandbox), the output goes through the
 * digest on a pipe (`digestCommand`), else to Codex as without Spillway. The command runs as
 * code in a subshell (so its `exit` ends only that), with the descriptors that
 * lead to Codex closed (a background job of the command must not hold them).
 * Spillway's own tools are reached by absolute path: the login shell resets PATH.
 */
export function wrapCodexCommand(command: string, opts: CodexWrapOptions): string {
  const inline = Math.max(0, Math.floor(opts.inlineBytes));
  const [wc, cat, rm] = (['wc', 'cat', 'rm'] as const).map((name) => wrapperTool(name));
  // No file can be made (a read-only sandbox): the output goes through the digest on a pipe (a process
  // substitution, so that the shell goes on and can tell it the status). Fd 7 is a pipe opened read-write
  // from /dev/fd (no file is made): the status line goes there once the command has ended, which a
  // background job holding the output pipe cannot delay. A digest that cannot start passes it all on (cat).
  const pipePath = opts.digestCommand
    ? ` elif { exec 7<> <(:); } 2>/dev/null; then __spillway_w=2; exec 8>&1 9>&2; exec 6> >(${opts.digestCommand} 3<&7 7>&- 8>&- 9>&- || exec ${cat} 7>&- 8>&- 9>&-); __spillway_d=$!; exec >&6 2>&1 6>&-;`
    : '';
  return [
    `${CODEX_CAPTURE_MARKER}${ansiCQuote(opts.captureFile)}; __spillway_final=${ansiCQuote(opts.finalFile)}; __spillway_cmd=${ansiCQuote(command)}; __spillway_w=0`,
    `if ( umask 077; set -C; : > "$__spillway_f" ) 2>/dev/null; then __spillway_w=1; exec 8>&1 9>&2 >>"$__spillway_f" 2>&1;${pipePath} fi`,
    '(',
    command,
    opts.digestCommand ? ') 7>&- 8>&- 9>&-' : ') 8>&- 9>&-',
    '__spillway_s=$?',
    'if [ "$__spillway_w" = 1 ]; then exec 1>&8 2>&9 8>&- 9>&-; ' +
      // $(( )) drops the spaces some wc put before the number.
      `if [ "$(( $(${wc} -c < "$__spillway_f") ))" -le ${inline} ]; then ${cat} "$__spillway_f"; ${rm} -- "$__spillway_f"; ` +
      // A failed finish step: the output goes out whole, and the file, which nothing names, goes.
      `else ${opts.finishCommand} "$__spillway_f" "$__spillway_final" "$__spillway_s" "$__spillway_cmd" || { ${cat} "$__spillway_f"; ${rm} -- "$__spillway_f"; }; fi; fi`,
    // The status first, then the output pipe closes (its end then finds the status there); wait: the digest is printed before the wrapper ends.
    ...(opts.digestCommand ? ['if [ "$__spillway_w" = 2 ]; then printf \'%s\\n\' "$__spillway_s" >&7; exec 1>&8 2>&9 7>&- 8>&- 9>&-; wait "$__spillway_d"; fi'] : []),
    'exit $__spillway_s',
  ].join('\n');
}

/** The digest on a pipe as this process would run it: same Node, same script, then `codex digest INLINE DIGEST_BYTES`. */
export function codexPipeDigestCommand(script: string, viaCli: boolean, inlineBytes: number, digestBytes: number, nodePath: string = process.execPath): string {
  const words = viaCli ? ['hook', 'codex', 'digest'] : ['codex', 'digest'];
  return [nodePath, path.resolve(script), ...words, String(inlineBytes), String(digestBytes)].map(shellQuote).join(' ');
}

/** The finish step as this process would run it: same Node, same script, then `codex finish DIGEST_BYTES`. */
export function codexFinishCommand(script: string, viaCli: boolean, digestBytes: number, nodePath: string = process.execPath): string {
  const words = viaCli ? ['hook', 'codex', 'finish'] : ['codex', 'finish'];
  return [nodePath, path.resolve(script), ...words, String(digestBytes)].map(shellQuote).join(' ');
}

/**
 * The finish step (the wrapper runs it for a large output, inside Codex's
 * sandbox): returns what the model sees, naming the file's final path, and
 * marks the capture done (a marker holding the command) so that the next
 * hook, outside the sandbox, moves it there and records it.
 */
export async function finishCodexCapture(file: string, finalFile: string, status: string, command: string, digestBytes: number): Promise<string> {
  const where = codexCaptureLocation(finalFile);
  if (!where || path.basename(file) !== path.basename(finalFile)) throw new Error(`not a Spillway capture file of Codex: ${file} -> ${finalFile}`);
  const digest = await digestFile(file, {
    budgetBytes: Math.max(MIN_DIGEST_BYTES, digestBytes),
    toolName: 'Bash',
    locator: finalFile,
    retrievalHint: await retrievalHintFor(file, where),
  });
  // Written after the digest is made: the mover may take the file as soon as the marker is there.
  await fsp.writeFile(`${file}${DONE_SUFFIX}`, JSON.stringify({ command, status }), { flag: 'wx', mode: 0o600 });
  const trailer = /^\d+$/.test(status)
    ? `[spillway: the command exited with code ${status}; its complete output (stdout and stderr) is in ${finalFile}]`
    : `[spillway: the command ended (${status}); its complete output (stdout and stderr) is in ${finalFile}]`;
  return `${digest}${digest.endsWith('\n') ? '' : '\n'}${trailer}\n`;
}

/** How to read the file; with a bucket configured, also the copy the mover's record will queue (same bytes, same key). */
async function retrievalHintFor(file: string, where: CaptureLocation): Promise<string> {
  const store = codexSessionStore(where.root, where.sessionDir);
  if (!isMirrored(store)) return LOCAL_RETRIEVAL_HINT;
  return remoteHint(LOCAL_RETRIEVAL_HINT, store.remoteUrl(where.sessionId, (await hashAndCount(file)).sha256));
}

/** The hook: reads the event, prints the rewrite (or nothing). Never throws: a failing hook must not fail the call. */
export async function runCodexHook(
  input: string,
  env: NodeJS.ProcessEnv,
  out: { stdout: (text: string) => void; stderr: (text: string) => void },
  entry: { script: string; viaCli: boolean },
): Promise<void> {
  const logger: SpillLogger = { warn: (m) => out.stderr(`spillway: ${m}\n`) };
  try {
    const event = parseCodexEvent(input);
    if (!event) return;
    // Captures of this session whose command has ended go to their final path first (PostToolUse: the call just
    // ended); the rollout is queued again too, so at Stop the bucket gets it with the turn's closing answer.
    await moveCodexCaptures({
      env,
      codexHome: codexHomeOf(event, env),
      sessionId: event.session_id,
      ...(event.hook_event_name === 'PostToolUse' ? { callId: event.tool_use_id } : {}),
      ...(event.transcript_path ? { transcript: event.transcript_path } : {}),
      logger,
    });
    // Only PreToolUse answers: Codex reads a Stop hook's stdout as a decision (continue the turn).
    if (event.hook_event_name !== 'PreToolUse') return;
    const digestBytes = positiveInt(env.SPILLWAY_DIGEST_BYTES) ?? DEFAULT_DIGEST_BYTES;
    const maxInlineBytes = positiveInt(env.SPILLWAY_MAX_INLINE_BYTES) ?? DEFAULT_MAX_INLINE_BYTES;
    const rewrite = await codexCaptureRewrite(event, env, {
      maxInlineBytes,
      digestBytes,
      finishCommand: codexFinishCommand(entry.script, entry.viaCli, digestBytes),
      digestCommand: codexPipeDigestCommand(entry.script, entry.viaCli, maxInlineBytes, digestBytes),
      logger,
    });
    if (rewrite) out.stdout(JSON.stringify(rewrite));
  } catch (err) {
    logger.warn(`hook failed, command left as typed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function positiveInt(raw: string | undefined): number | undefined {
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== '' && Number.isFinite(n) && n > 0 ? Math.floor(n) : undefined;
}

/** `finish DIGEST_BYTES FILE FINAL STATUS COMMAND`: prints the digest; exit 1 (the wrapper then prints the output whole) on failure. */
export async function runCodexFinish(args: string[], out: { stdout: (text: string) => void; stderr: (text: string) => void }): Promise<number> {
  const [digestBytes, file, finalFile, status, command] = args;
  const budget = Number(digestBytes);
  if (!file || !finalFile || status === undefined || command === undefined || !Number.isFinite(budget) || budget <= 0) {
    out.stderr('usage: codex finish DIGEST_BYTES FILE FINAL STATUS COMMAND\n');
    return 2;
  }
  try {
    out.stdout(await finishCodexCapture(file, finalFile, status, command, Math.floor(budget)));
    return 0;
  } catch (err) {
    out.stderr(`spillway: could not digest ${file}, printing it whole: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
