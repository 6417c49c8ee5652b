import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TranscriptCache, type LineReducer } from '../../../src/catalog/transcripts';

const counter: LineReducer<{ ids: number[] }> = {
  kind: 'test',
  init: () => ({ ids: [] }),
  line: (state, value) => {
    const id = (value as { id?: unknown }).id;
    if (typeof id !== 'number') return false;
    state.ids.push(id);
    return true;
  },
};

let dir: string | undefined;
afterEach(async () => dir && fsp.rm(dir, { recursive: true, force: true }));

describe('TranscriptCache', () => {
  it('reads an appended transcript from where it stopped, and a torn line once it is complete', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
    const file = path.join(dir, 't.jsonl');
    await fsp.writeFile(file, '{"id":1}\n{"id":2}\n{"id":');
    const cache = new TranscriptCache();
    const first = (await cache.read(file, counter))!;
    expect(first.state.ids).toEqual([1, 2]);
    expect(first.skipped).toBe(1); // the torn tail
    const readBefore = cache.bytesRead;
    await fsp.appendFile(file, '3}\nnot json\n{"other":true}\n');
    const second = (await cache.read(file, counter))!;
    expect(second.state.ids).toEqual([1, 2, 3]);
    expect(second.skipped).toBe(2);
    // Only the bytes after the last complete line were read again.
    expect(cache.bytesRead - readBefore).toBe('{"id":3}\nnot json\n{"other":true}\n'.length);
    // Unchanged: served from the cache.
    await cache.read(file, counter);
    expect(cache.bytesRead - readBefore).toBe('{"id":3}\nnot json\n{"other":true}\n'.length);
  });

  it('starts over when the file shrank, and reports a missing file as undefined', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
    const file = path.join(dir, 't.jsonl');
    await fsp.writeFile(file, '{"id":1}\n{"id":2}\n');
    const cache = new TranscriptCache();
    await cache.read(file, counter);
    await fsp.writeFile(file, '{"id":9}\n');
    expect((await cache.read(file, counter))!.state.ids).toEqual([9]);
    await fsp.rm(file);
    expect(await cache.read(file, counter)).toBeUndefined();
  });
});

describe('TranscriptCache with long lines', () => {
  it('parses lines longer than one read, split across reads', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
    const file = path.join(dir, 'long.jsonl');
    const big = 'y'.repeat(700 * 1024);
    await fsp.writeFile(file, `{"id":1,"pad":"${big}"}\n{"id":2}\n{"id":3,"pad":"${big}"}\n`);
    const read = (await new TranscriptCache().read(file, counter))!;
    expect(read.state.ids).toEqual([1, 2, 3]);
    expect(read.skipped).toBe(0);
  });
});
