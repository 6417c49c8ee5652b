import { describe, expect, it } from 'vitest';
import { claudeSessionDir, claudeSpillDir, parseHookInput } from '../../../src/adapters/claude-code-event';

const base = {
  session_id: 'a8596db4-f8da-40c2-9db5-c17f7cb847a8',
  transcript_path: '/home/dev/.claude/projects/-home-dev-work/a8596db4-f8da-40c2-9db5-c17f7cb847a8.jsonl',
  cwd: '/home/dev/work',
  hook_event_name: 'PostToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'ls' },
  tool_response: { stdout: 'a', stderr: '', interrupted: false },
  tool_use_id: 'toolu_1',
};

describe('parseHookInput', () => {
  it('accepts a PostToolUse event and ignores extra fields', () => {
    const r = parseHookInput(JSON.stringify({ ...base, prompt_id: 'p', effort: { level: 'medium' } }));
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.event).toEqual(base);
  });

  it('ignores other events without calling them invalid', () => {
    expect(parseHookInput(JSON.stringify({ ...base, hook_event_name: 'UserPromptSubmit' }))).toMatchObject({ ok: false, kind: 'ignore' });
  });

  it('accepts Stop with no tool fields, and wants its session and transcript', () => {
    const stop = { session_id: base.session_id, transcript_path: base.transcript_path, cwd: '/w', hook_event_name: 'Stop', stop_hook_active: false };
    expect(parseHookInput(JSON.stringify(stop))).toEqual({ ok: true, event: { hook_event_name: 'Stop', session_id: base.session_id, transcript_path: base.transcript_path, cwd: '/w' } });
    expect(parseHookInput(JSON.stringify({ ...stop, transcript_path: undefined }))).toMatchObject({ ok: false, kind: 'invalid' });
  });

  it('accepts PreToolUse (no tool_response) and PostToolUseFailure with its error and interrupt flag', () => {
    const { tool_response: _r, ...noResponse } = base;
    const pre = parseHookInput(JSON.stringify({ ...noResponse, hook_event_name: 'PreToolUse', permission_mode: 'bypassPermissions' }));
    expect(pre).toMatchObject({ ok: true, event: { hook_event_name: 'PreToolUse', permission_mode: 'bypassPermissions' } });
    const failure = parseHookInput(JSON.stringify({ ...noResponse, hook_event_name: 'PostToolUseFailure', error: 'Exit code 2', is_interrupt: true }));
    expect(failure).toMatchObject({ ok: true, event: { hook_event_name: 'PostToolUseFailure', error: 'Exit code 2', is_interrupt: true } });
    expect(parseHookInput(JSON.stringify({ ...noResponse, hook_event_name: 'PostToolUse' }))).toMatchObject({ ok: false, kind: 'invalid' });
  });

  it.each([
    ['', /no input/],
    ['nope', /not JSON/],
    ['"a string"', /not a JSON object/],
    [JSON.stringify({ ...base, hook_event_name: undefined }), /no hook_event_name/],
    [JSON.stringify({ ...base, tool_use_id: '' }), /lacks tool_use_id/],
    [JSON.stringify({ ...base, tool_response: undefined }), /lacks tool_response/],
    [JSON.stringify({ ...base, session_id: '../x' }), /unusable session_id/],
    [JSON.stringify({ ...base, session_id: 'a/b' }), /unusable session_id/],
    [JSON.stringify({ ...base, transcript_path: 'relative.jsonl' }), /not absolute/],
  ])('rejects %j', (input, why) => {
    const r = parseHookInput(input);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.kind).toBe('invalid');
      expect(r.reason).toMatch(why);
    }
  });
});

describe('claudeSessionDir', () => {
  it('is <transcript dir>/<sessionId>, where Claude Code keeps tool-results/', () => {
    expect(claudeSessionDir(base)).toBe('/home/dev/.claude/projects/-home-dev-work/a8596db4-f8da-40c2-9db5-c17f7cb847a8');
    expect(claudeSpillDir(base)).toBe('/home/dev/.claude/projects/-home-dev-work/a8596db4-f8da-40c2-9db5-c17f7cb847a8/spillway');
  });

  it("walks up from a subagent's transcript to the session folder", () => {
    const sub = { ...base, transcript_path: '/c/projects/-w/a8596db4-f8da-40c2-9db5-c17f7cb847a8/subagents/agent-7.jsonl' };
    expect(claudeSessionDir(sub)).toBe('/c/projects/-w/a8596db4-f8da-40c2-9db5-c17f7cb847a8');
  });
});
