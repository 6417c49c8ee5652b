// Claude Agent SDK: the command hook's behaviour as HookCallbacks for
// `options.hooks`. Only the SDK's types are imported, so using Spillway never
// loads the SDK itself.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HookCallback, HookCallbackMatcher, HookEvent, HookJSONOutput } from '@anthropic-ai/claude-agent-sdk';
import { finishCommandFor } from './claude-code-bash';
import { toHookEvent } from './claude-code-event';
import { hookOutputFor, type ClaudeCodeSpillOptions } from './claude-code-hook';
import { DEFAULT_DIGEST_BYTES } from '../spill/policy';
import { checkSizes } from '../spill/checked-options';
import type { SpillLogger } from '../spill/types';
import { CLAUDE_CODE_HOOK_EVENTS } from './settings-install';

export interface SpillHookOptions extends ClaudeCodeSpillOptions {
  /**
   * Spillway's dist/hook.js, which a captured Bash command runs when it ends
   * (the SDK's hooks run in this process, the command in Claude Code's shell).
   * Default: the hook.js installed beside this module.
   */
  hookScript?: string;
}

/**
 * One callback for every event Spillway handles (PreToolUse, PostToolUse,
 * PostToolUseFailure). Returns `{}` (leave the tool alone) whenever it has
 * nothing to change; never throws.
 */
export function spillHook(options: SpillHookOptions = {}): HookCallback {
  checkSizes(options, ['maxInlineBytes', 'digestBytes']);
  // Messages do not name their source; here they reach the caller's logger, beside its own.
  const user = options.logger;
  const logger: SpillLogger | undefined = user && { warn: (m) => user.warn(`spillway: ${m}`), debug: (m) => user.debug?.(`spillway: ${m}`) };
  const finishCommand = options.finishCommand ?? finishCommandOf(options, logger);
  const resolved: ClaudeCodeSpillOptions = { ...options, logger, ...(finishCommand ? { finishCommand } : {}) };
  return async (input): Promise<HookJSONOutput> => {
    const parsed = toHookEvent(input);
    if (!parsed.ok) {
      if (parsed.kind === 'invalid') logger?.warn(`ignored hook input: ${parsed.reason}`);
      return {};
    }
    return ((await hookOutputFor(parsed.event, resolved)) as HookJSONOutput | undefined) ?? {};
  };
}

/**
 * ```ts
 * query({ prompt, options: { hooks: spillwayHooks() } })
 * ```
 * The hooks for `options.hooks`: the Bash capture (PreToolUse,
 * PostToolUseFailure) and the spill of large results (PostToolUse), with the
 * same matchers `spillway hook install claude-code` writes.
 */
export function spillwayHooks(options: SpillHookOptions = {}): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const hook = spillHook(options);
  const out: Partial<Record<HookEvent, HookCallbackMatcher[]>> = {};
  for (const { event, matcher } of CLAUDE_CODE_HOOK_EVENTS) out[event as HookEvent] = [{ matcher, hooks: [hook] }];
  return out;
}

function finishCommandOf(options: SpillHookOptions, logger: SpillLogger | undefined): string | undefined {
  // Bundled: dist/index.js beside dist/hook.js; from the sources: the built dist/.
  const candidates = options.hookScript ? [options.hookScript] : [path.join(__dirname, 'hook.js'), path.resolve(__dirname, '..', '..', 'dist', 'hook.js')];
  const script = candidates.find((c) => fs.existsSync(c));
  if (!script) {
    logger?.warn(`${candidates[0]} not found; Bash commands are not captured`);
    return undefined;
  }
  return finishCommandFor(script, false, options.digestBytes ?? DEFAULT_DIGEST_BYTES);
}
