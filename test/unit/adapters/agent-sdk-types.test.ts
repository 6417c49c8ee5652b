// Type-level checks against the Agent SDK's own declarations (tsc checks this
// file with the rest of test/), plus runtime checks of spillHook in-process.
import type { HookCallback, HookCallbackMatcher, HookJSONOutput, Options, PostToolUseHookInput, SyncHookJSONOutput } from '@anthropic-ai/claude-agent-sdk';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { spillHook, spillwayEnv, spillwayHooks } from '../../../src/adapters/agent-sdk';
import type { PostToolUseReplacement } from '../../../src/adapters/claude-code-hook';

// What the command hook prints is a valid synchronous hook answer.
expectTypeOf<PostToolUseReplacement>().toMatchTypeOf<SyncHookJSONOutput>();
// spillwayEnv() merges into options.env.
expectTypeOf(spillwayEnv).returns.toMatchTypeOf<NonNullable<Options['env']>>();
// spillwayHooks() is options.hooks itself.
expectTypeOf(spillwayHooks()).toMatchTypeOf<NonNullable<Options['hooks']>>();
// spillHook() plugs into options.hooks.PostToolUse as the SDK declares it.
expectTypeOf(spillHook()).toEqualTypeOf<HookCallback>();
const matcher: HookCallbackMatcher = { matcher: 'Bash|Grep|WebFetch|mcp__.*', hooks: [spillHook({ maxInlineBytes: 4096 })] };
const hooks: Options['hooks'] = { PostToolUse: [matcher] };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-sdk-unit-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function input(toolResponse: unknown, id: string): PostToolUseHookInput {
  return {
    session_id: 'sdk-session-1',
    transcript_path: path.join(tmp, 'projects', '-w', 'sdk-session-1.jsonl'),
    cwd: tmp,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'make' },
    tool_response: toolResponse,
    tool_use_id: id,
  };
}

const call = (hook: HookCallback, i: PostToolUseHookInput): Promise<HookJSONOutput> => hook(i, i.tool_use_id, { signal: new AbortController().signal });

describe('spillHook', () => {
  it('is registered under PostToolUse', () => {
    expect(hooks?.PostToolUse?.[0]?.hooks).toHaveLength(1);
  });

  it('is what spillwayHooks() registers, PostToolUse (Bash goes through the shell prefix) and Stop, matched as the command hook installs them', () => {
    const all = spillwayHooks();
    expect(Object.keys(all)).toEqual(['PostToolUse', 'Stop']);
    expect(all.PostToolUse?.[0]?.matcher).not.toMatch(/(?:^|\|)Bash(?:\||$)/);
    expect(all.Stop?.[0]).not.toHaveProperty('matcher');
  });

  it('spillwayEnv() names the shell prefix beside hook.js, with "$0" for the shell, and chains a prefix the base environment had', () => {
    const dist = fs.mkdtempSync(path.join(tmp, 'dist-'));
    for (const f of ['claude-code-prefix.sh', 'hook.js']) fs.writeFileSync(path.join(dist, f), '');
    const env = spillwayEnv({ distDir: dist, maxInlineBytes: 8000, base: { CLAUDE_CODE_SHELL_PREFIX: '/usr/local/bin/audit' } });
    expect(env.CLAUDE_CODE_SHELL_PREFIX).toBe(`${path.join(dist, 'claude-code-prefix.sh')} -s "$0" ${process.execPath}`);
    expect(env.SPILLWAY_CHAINED_SHELL_PREFIX).toBe('/usr/local/bin/audit');
    expect(env.SPILLWAY_MAX_INLINE_BYTES).toBe('8000');
    expect(() => spillwayEnv({ distDir: path.join(tmp, 'none') })).toThrow(/not found/);
  });

  it('returns the Bash-shaped digest and writes the blob beside the session', async () => {
    const stdout = Array.from({ length: 2000 }, (_, i) => `compile unit ${i}`).join('\n') + '\nmake: *** [all] Error 2\n';
    const out = (await call(spillHook(), input({ stdout, stderr: '', interrupted: false }, 'toolu_sdk_1'))) as SyncHookJSONOutput;
    const specific = out.hookSpecificOutput as { hookEventName: string; updatedToolOutput: { stdout: string; stderr: string; interrupted: boolean } };
    expect(specific.hookEventName).toBe('PostToolUse');
    expect(specific.updatedToolOutput.interrupted).toBe(false);
    expect(specific.updatedToolOutput.stdout).toContain('make: *** [all] Error 2');
    expect(specific.updatedToolOutput.stdout.length).toBeLessThan(stdout.length / 4);
    const spillDir = path.join(tmp, 'projects', '-w', 'sdk-session-1', 'spillway');
    expect(fs.readdirSync(spillDir).some((f) => f.endsWith('-Bash-toolu_sdk_1.txt'))).toBe(true);
  });

  it('answers {} (keep the output) under the threshold, for other events and for garbage', async () => {
    const hook = spillHook();
    expect(await call(hook, input({ stdout: 'ok', stderr: '', interrupted: false }, 'toolu_sdk_2'))).toEqual({});
    const warnings: string[] = [];
    const noisy = spillHook({ logger: { warn: (m) => warnings.push(m) } });
    expect(await noisy({ hook_event_name: 'UserPromptSubmit' } as never, undefined, { signal: new AbortController().signal })).toEqual({});
    const stop = { hook_event_name: 'Stop', session_id: 'sdk-session-1', transcript_path: input({}, 'x').transcript_path, cwd: tmp, stop_hook_active: false };
    expect(await noisy(stop as never, undefined, { signal: new AbortController().signal })).toEqual({});
    expect(await noisy({ nonsense: true } as never, undefined, { signal: new AbortController().signal })).toEqual({});
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/ignored hook input/);
  });
});
