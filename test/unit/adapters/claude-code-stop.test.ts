// Claude Code's Stop hook: at the end of each turn the transcript is queued again for a configured bucket, so the
// bucket's copy holds the closing answer; a session without blobs, or without a bucket, is left alone. It never
// answers anything (a Stop answer could make the model go on).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handleClaudeCodeHookInput } from '../../../src/adapters/claude-code-hook';

let dir: string;
let queue: string;
let transcript: string;
const SESSION = 'stop-session-1';

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-cc-stop-'));
  queue = path.join(dir, 'uploads');
  transcript = path.join(dir, 'projects', '-w', `${SESSION}.jsonl`);
  fs.mkdirSync(path.dirname(transcript), { recursive: true });
  fs.writeFileSync(transcript, '{}\n');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const stop = () => JSON.stringify({ session_id: SESSION, transcript_path: transcript, cwd: dir, hook_event_name: 'Stop', stop_hook_active: false });
const queued = () => (fs.existsSync(queue) ? fs.readdirSync(queue).filter((n) => n.endsWith('.pending.json')) : []);
const bucket = () => ({ SPILLWAY_STORE: 's3://team-spills/p', SPILLWAY_UPLOAD_QUEUE: queue });

describe('Claude Code Stop hook', () => {
  it('queues the transcript of a session that spilled, and answers nothing', async () => {
    fs.mkdirSync(path.join(path.dirname(transcript), SESSION, 'spillway'), { recursive: true });
    expect(await handleClaudeCodeHookInput(stop(), { env: bucket() })).toBeUndefined();
    const entries = queued();
    expect(entries).toHaveLength(1);
    expect(JSON.parse(fs.readFileSync(path.join(queue, entries[0]!), 'utf8'))).toMatchObject({ kind: 'transcript', file: transcript, agent: 'claude-code', sessionId: SESSION });
  });

  it('leaves a session without blobs alone', async () => {
    expect(await handleClaudeCodeHookInput(stop(), { env: bucket() })).toBeUndefined();
    expect(queued()).toEqual([]);
  });

  it('does nothing without a bucket', async () => {
    fs.mkdirSync(path.join(path.dirname(transcript), SESSION, 'spillway'), { recursive: true });
    expect(await handleClaudeCodeHookInput(stop(), { env: { SPILLWAY_UPLOAD_QUEUE: queue } })).toBeUndefined();
    expect(queued()).toEqual([]);
  });
});
