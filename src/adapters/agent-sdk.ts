// Claude Agent SDK: the command hook's behaviour as HookCallbacks for
// `options.hooks`, and the environment that turns on the Bash capture (the
// same shell prefix `spillway hook install claude-code` writes). Only the SDK's
// types are imported, so using Spillway never loads the SDK itself.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HookCallback, HookCallbackMatcher, HookEvent, HookJSONOutput } from '@anthropic-ai/claude-agent-sdk';
import { toHookEvent } from './claude-code-event';
import { hookOutputFor, type ClaudeCodeSpillOptions } from './claude-code-hook';
import { CHAINED_PREFIX_VAR, PREFIX_SCRIPT_NAME, SHELL_PREFIX_VAR, shellPrefixValue } from './claude-code-prefix-install';
import { checkSizes } from '../spill/checked-options';
import { uploadQueuedInBackground } from '../spill/remote/configured';
import type { SpillLogger } from '../spill/types';
import { hookGroup } from './hook-group';
import { CLAUDE_CODE_HOOK_EVENTS } from './settings-install';

export type SpillHookOptions = ClaudeCodeSpillOptions;

/**
 * The callback for PostToolUse and Stop. Returns `{}` (leave the tool alone) whenever it has nothing to change; never
 * throws.
 */
export function spillHook(options: SpillHookOptions = {}): HookCallback {
  checkSizes(options, ['maxInlineBytes', 'digestBytes']);
  // Messages do not name their source; here they reach the caller's logger, beside its own.
  const user = options.logger;
  const logger: SpillLogger | undefined = user && { warn: (m) => user.warn(`spillway: ${m}`), debug: (m) => user.debug?.(`spillway: ${m}`) };
  const resolved: ClaudeCodeSpillOptions = { ...options, logger };
  return async (input): Promise<HookJSONOutput> => {
    const parsed = toHookEvent(input);
    if (!parsed.ok) {
      if (parsed.kind === 'invalid') logger?.warn(`ignored hook input: ${parsed.reason}`);
      return {};
    }
    const output = ((await hookOutputFor(parsed.event, resolved)) as HookJSONOutput | undefined) ?? {};
    // Copies owed to a bucket go up in a process of their own; the SDK gets its answer now.
    void uploadQueuedInBackground(resolved.env ?? process.env);
    return output;
  };
}

/**
 * ```ts
 * query({ prompt, options: { hooks: spillwayHooks(), env: { ...process.env, ...spillwayEnv() } } })
 * ```
 * The hooks for `options.hooks` (PostToolUse, with the matcher `spillway hook install claude-code` writes, and
 * Stop, which sends the transcript to a configured bucket at each turn's end).
 * Bash output is captured by the shell prefix that `spillwayEnv()` sets.
 */
export function spillwayHooks(options: SpillHookOptions = {}): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const hook = spillHook(options);
  const out: Partial<Record<HookEvent, HookCallbackMatcher[]>> = {};
  for (const { event, matcher } of CLAUDE_CODE_HOOK_EVENTS) out[event as HookEvent] = [hookGroup(matcher, [hook])];
  return out;
}

export interface SpillwayEnvOptions {
  /** Spillway's dist/ folder (claude-code-prefix.sh and hook.js). Default: the one beside this module. */
  distDir?: string;
  /** Outputs over this many bytes are digested (SPILLWAY_MAX_INLINE_BYTES). */
  maxInlineBytes?: number;
  /** SPILLWAY_DIGEST_BYTES. */
  digestBytes?: number;
  /** The environment the session would have had: a CLAUDE_CODE_SHELL_PREFIX in it is chained (run by Spillway's). */
  base?: NodeJS.ProcessEnv;
}

/**
 * The variables for `options.env` that capture Bash output: Claude Code runs each command through Spillway's
 * shell prefix, after its own permission check. Merge them over the environment you pass.
 */
export function spillwayEnv(options: SpillwayEnvOptions = {}): Record<string, string> {
  checkSizes(options, ['maxInlineBytes', 'digestBytes']);
  const candidates = options.distDir ? [options.distDir] : [__dirname, path.resolve(__dirname, '..', '..', 'dist')];
  const dir = candidates.find((d) => fs.existsSync(path.join(d, PREFIX_SCRIPT_NAME)) && fs.existsSync(path.join(d, 'hook.js')));
  if (!dir) throw new Error(`${PREFIX_SCRIPT_NAME} and hook.js not found in ${candidates.join(' or ')}`);
  const env: Record<string, string> = { [SHELL_PREFIX_VAR]: shellPrefixValue(path.join(dir, PREFIX_SCRIPT_NAME)) };
  const previous = options.base?.[SHELL_PREFIX_VAR];
  if (previous && previous !== env[SHELL_PREFIX_VAR]) env[CHAINED_PREFIX_VAR] = previous;
  if (options.maxInlineBytes !== undefined) env.SPILLWAY_MAX_INLINE_BYTES = String(Math.floor(options.maxInlineBytes));
  if (options.digestBytes !== undefined) env.SPILLWAY_DIGEST_BYTES = String(Math.floor(options.digestBytes));
  return env;
}
