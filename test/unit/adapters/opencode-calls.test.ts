// The plugin's record of API calls: each line is told to the caller (which queues the record for a bucket), and the
// session's end of turn is told again, so a record whose last queueing `opencode run` cut short still travels.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OpencodeCallRecorder } from '../../../src/adapters/opencode-calls';
import { tempDir } from '../spill/temp-dirs';

const stepFinish = (sessionID: string, id: string) => ({
  type: 'message.part.updated',
  properties: { part: { type: 'step-finish', id, messageID: `msg_${id}`, sessionID, tokens: { input: 10, output: 2 } } },
});

describe('OpencodeCallRecorder', () => {
  it("tells each line appended, and the session's record again when the session goes idle", async () => {
    const root = tempDir('spillway-oc-calls-');
    const told: Array<[string, string]> = [];
    const recorder = new OpencodeCallRecorder(root, (dir) => fsp.mkdir(dir, { recursive: true }).then(() => undefined), async (s, f) => {
      told.push([s, f]);
    });
    await recorder.event(stepFinish('ses_a', 'p1'));
    await recorder.event(stepFinish('ses_a', 'p2'));
    await recorder.event({ type: 'session.idle', properties: { sessionID: 'ses_a' } });
    const file = path.join(root, 'ses_a', '.spillway-calls.jsonl');
    expect(told).toEqual([
      ['ses_a', file],
      ['ses_a', file],
      ['ses_a', file],
    ]);
    expect((await fsp.readFile(file, 'utf8')).trim().split('\n')).toHaveLength(2);
  });

  it('tells nothing for an idle session it wrote no line of', async () => {
    const told: string[] = [];
    const recorder = new OpencodeCallRecorder(tempDir('spillway-oc-calls-'), async () => undefined, async (s) => {
      told.push(s);
    });
    await recorder.event({ type: 'session.idle', properties: { sessionID: 'ses_b' } });
    await recorder.event({ type: 'session.idle', properties: {} });
    expect(told).toEqual([]);
  });
});
