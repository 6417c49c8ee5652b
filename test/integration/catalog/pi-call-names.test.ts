// pi blobs named only by the transcript: a file in `<id>-blobs/` named after
// the tool call's id with [^A-Za-z0-9_-] made '_' (maybe with '@<time>'), and
// no index entry for it. Each is matched to its call once, by a map of the
// sanitized ids (looking every blob up through every call id was quadratic).
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog';

let dir: string;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'catalog-pi-call-names-'));
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const id = '0195b7c2-0000-7000-8000-00000000a11c';
const at = (i: number) => new Date(Date.UTC(2026, 2, 1, 9, 0, i)).toISOString();

/** One pi session whose assistant lines call `calls` ([call id, command]) in order, and the blob files named `files`. */
async function piSession(calls: Array<[string, string]>, files: string[]): Promise<{ root: string; blobsDir: string }> {
  const root = path.join(dir, 'sessions');
  const folder = path.join(root, '--home-dev-acme--');
  const blobsDir = path.join(folder, `${id}-blobs`);
  await fsp.mkdir(blobsDir, { recursive: true });
  const lines: unknown[] = [{ type: 'session', version: 3, id, timestamp: at(0), cwd: '/home/dev/acme' }];
  calls.forEach(([callId, command], i) => {
    const message = { role: 'assistant', content: [{ type: 'toolCall', id: callId, name: 'bash', arguments: { command } }], usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 } };
    lines.push({ type: 'message', id: `a${i}`, parentId: i === 0 ? null : `r${i - 1}`, timestamp: at(i + 1), message });
    lines.push({ type: 'message', id: `r${i}`, parentId: `a${i}`, timestamp: at(i + 1), message: { role: 'toolResult', toolCallId: callId, toolName: 'bash', content: [{ type: 'text', text: 'spilled' }] } });
  });
  await fsp.writeFile(path.join(folder, `2026-03-01T09-00-00-000Z_${id}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  for (const name of files) await fsp.writeFile(path.join(blobsDir, name), `output of ${name}\n`);
  return { root, blobsDir };
}

it('matches each blob to the call whose sanitized id names it: the first such call, with or without an @time suffix', async () => {
  const { root, blobsDir } = await piSession(
    [
      ['toolu_01|fc_1', 'make one'],
      ['toolu_01/fc_1', 'make two'], // sanitizes to the same name as the first: the first call keeps it
      ['call.3', 'make three'],
      ['call_4', 'make four'],
    ],
    ['toolu_01_fc_1.txt', 'call_3@1772355600000.txt', 'call_4.txt', 'call_5.txt'],
  );
  const catalog = new Catalog({ roots: [root], useDefaultRoots: false });
  try {
    await catalog.scan();
    const blob = (name: string) => catalog.blob(path.join(blobsDir, name));
    expect(blob('toolu_01_fc_1.txt')).toMatchObject({ toolCallId: 'toolu_01|fc_1', tool: 'bash', args: 'make one', attribution: 'transcript', turn: 1 });
    expect(blob('call_3@1772355600000.txt')).toMatchObject({ toolCallId: 'call.3', args: 'make three', attribution: 'transcript', turn: 3 });
    expect(blob('call_4.txt')).toMatchObject({ toolCallId: 'call_4', args: 'make four', attribution: 'transcript', turn: 4 });
    // No call of that id: listed, unattributed.
    expect(blob('call_5.txt')).toMatchObject({ attribution: 'none', tool: undefined });
  } finally {
    await catalog.dispose();
  }
});

it('attributes a session of 3,000 such blobs, each to its own call', async () => {
  const calls = Array.from({ length: 3000 }, (_, i): [string, string] => [`toolu_${String(i).padStart(6, '0')}|fc_${i}`, `make target-${i}`]);
  const { root, blobsDir } = await piSession(calls, calls.map(([callId]) => `${callId.replace('|', '_')}.txt`));
  const catalog = new Catalog({ roots: [root], useDefaultRoots: false });
  try {
    await catalog.scan();
    const [session] = catalog.sessions();
    expect(session!.blobs).toHaveLength(3000);
    for (const [callId, command] of calls) {
      expect(catalog.blob(path.join(blobsDir, `${callId.replace('|', '_')}.txt`))).toMatchObject({ toolCallId: callId, args: command, attribution: 'transcript' });
    }
  } finally {
    await catalog.dispose();
  }
});
