// Codex's Stop event (as Codex 0.169.0 sends it): taken with its session alone, no tool fields, and answered with
// nothing (Codex reads a Stop hook's stdout as a decision to go on).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCodexEvent, runCodexHook } from '../../../src/adapters/codex-capture';

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-codex-stop-'));
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

const stop = (extra: Record<string, unknown> = {}) => ({
  session_id: '019a0000-0000-7000-8000-000000000001',
  turn_id: 'turn-1',
  transcript_path: path.join(home, 'sessions', '2026', '12', '07', 'rollout-x.jsonl'),
  cwd: '/w',
  hook_event_name: 'Stop',
  model: 'gpt-5.1-codex',
  permission_mode: 'default',
  stop_hook_active: false,
  last_assistant_message: 'done',
  ...extra,
});

describe('Codex Stop hook', () => {
  it('parses Stop with its session alone, and refuses one without a session', () => {
    expect(parseCodexEvent(JSON.stringify(stop()))).toMatchObject({ hook_event_name: 'Stop', session_id: stop().session_id });
    expect(parseCodexEvent(JSON.stringify(stop({ session_id: undefined })))).toBeUndefined();
    // A tool event still needs its tool fields.
    expect(parseCodexEvent(JSON.stringify({ ...stop(), hook_event_name: 'PreToolUse' }))).toBeUndefined();
  });

  it('prints nothing and leaves nothing behind', async () => {
    const out: string[] = [];
    const err: string[] = [];
    await runCodexHook(JSON.stringify(stop()), { CODEX_HOME: home }, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) }, { script: 'codex-hook.js', viaCli: false });
    expect(out).toEqual([]);
    expect(err).toEqual([]);
    expect(fs.readdirSync(home)).toEqual([]);
  });
});
