// The plugin's record of API calls: each line is told to the caller (which queues the record for a bucket), and the
// session's end of turn is told again, so a record whose last queueing `opencode run` cut short still travels.
import { existsSync, promises as fsp, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OpencodeCallRecorder } from '../../../src/adapters/opencode-calls';
import { opencodeCaptureDefaults, queueCallsRecord } from '../../../src/adapters/opencode-capture';
import { MANIFEST_NAME } from '../../../src/spill/manifest';
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

  it('has the record queued for the bucket before the event handler first waits (`opencode run` may exit then)', async () => {
    const dir = tempDir('spillway-oc-queue-');
    const queue = path.join(dir, 'uploads');
    // The uploader it starts is a script that does nothing: the entries stay for this test to see.
    const idleCli = path.join(dir, 'cli.js');
    writeFileSync(idleCli, '');
    const opts = { ...opencodeCaptureDefaults({}), root: path.join(dir, 'spillway'), env: { SPILLWAY_STORE: 's3://team-spills/p', SPILLWAY_UPLOAD_QUEUE: queue, SPILLWAY_CLI: idleCli } };
    const recorder = new OpencodeCallRecorder(opts.root, (d) => fsp.mkdir(d, { recursive: true }).then(() => undefined), (s, f) => queueCallsRecord(opts, s, f));
    await recorder.event(stepFinish('ses_q', 'p1')); // the session's folder made, its first line written
    writeFileSync(path.join(opts.root, 'ses_q', MANIFEST_NAME), ''); // a session Spillway spilled from
    const entries = () => (existsSync(queue) ? readdirSync(queue).filter((n) => n.endsWith('.pending.json')) : []);
    for (const n of entries()) rmSync(path.join(queue, n));
    // A line appended: its queue entry is there at once.
    const handled = recorder.event(stepFinish('ses_q', 'p2'));
    expect(entries()).toHaveLength(1);
    await handled;
    // The session idle: queued again at once.
    for (const n of entries()) rmSync(path.join(queue, n));
    const idle = recorder.event({ type: 'session.idle', properties: { sessionID: 'ses_q' } });
    expect(entries()).toHaveLength(1);
    await idle;
  });
});
