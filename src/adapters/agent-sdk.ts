// Claude Agent SDK: the same PostToolUse behaviour as the command hook, as a
// HookCallback for `options.hooks.PostToolUse`. Only the SDK's types are
// imported, so using Spillway never loads the SDK itself.
import type { HookCallback, HookJSONOutput } from '@anthropic-ai/claude-agent-sdk';
import { toPostToolUseEvent } from './claude-code-event';
import { replacementFor, type ClaudeCodeSpillOptions } from './claude-code-hook';

export type SpillHookOptions = ClaudeCodeSpillOptions;

/**
 * ```ts
 * query({ prompt, options: { hooks: { PostToolUse: [{ hooks: [spillHook()] }] } } })
 * ```
 * Returns `{}` (keep the tool's output) whenever it does not spill; never throws.
 */
export function spillHook(options: SpillHookOptions = {}): HookCallback {
  return async (input): Promise<HookJSONOutput> => {
    const parsed = toPostToolUseEvent(input);
    if (!parsed.ok) {
      if (parsed.kind === 'invalid') options.logger?.warn(`spillway: ignored hook input: ${parsed.reason}`);
      return {};
    }
    return (await replacementFor(parsed.event, options)) ?? {};
  };
}
