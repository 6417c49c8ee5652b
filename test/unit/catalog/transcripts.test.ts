import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeReducer } from '../../../src/catalog/sources/claude-code';
import { stampOf } from '../../../src/catalog/index/index-file';
import { TranscriptCache, type LineReducer } from '../../../src/catalog/transcripts/transcripts';
import { REAL_CLAUDE_FIXTURES } from '../../fixtures/build-home';

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

/** A transcript holding `text` in a new temporary folder, and a cache that has not read it. */
async function transcriptHolding(text: string): Promise<{ file: string; cache: TranscriptCache }> {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
  const file = path.join(dir, 't.jsonl');
  await fsp.writeFile(file, text);
  return { file, cache: new TranscriptCache() };
}

describe('TranscriptCache', () => {
  it('reads an appended transcript from where it stopped, and a torn line once it is complete', async () => {
    const { file, cache } = await transcriptHolding('{"id":1}\n{"id":2}\n{"id":');
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
    const { file, cache } = await transcriptHolding('{"id":1}\n{"id":2}\n');
    await cache.read(file, counter);
    await fsp.writeFile(file, '{"id":9}\n');
    expect((await cache.read(file, counter))!.state.ids).toEqual([9]);
    await fsp.rm(file);
    expect(await cache.read(file, counter)).toBeUndefined();
  });
});

describe('TranscriptCache: the stamp of what was read', () => {
  it('keeps the stamp its read took, so a line appended after the read is not taken as read', async () => {
    const { file, cache } = await transcriptHolding('{"id":1}\n');
    expect(cache.stampRead(file)).toBeUndefined();
    await cache.read(file, counter);
    const read = cache.stampRead(file);
    expect(read).toBe(stampOf(file));
    await fsp.appendFile(file, '{"id":2}\n');
    // What a later scan compares with: the file now, which differs from what was read.
    expect(cache.stampRead(file)).toBe(read);
    expect(stampOf(file)).not.toBe(read);
    await cache.read(file, counter);
    expect(cache.stampRead(file)).toBe(stampOf(file));
    await fsp.rm(file);
    await cache.read(file, counter);
    expect(cache.stampRead(file)).toBe('-');
    cache.forget(file);
    expect(cache.stampRead(file)).toBeUndefined();
  });
});

describe('TranscriptCache with long lines', () => {
  it('reads several big transcripts at once, each whole and in order (they share one read buffer and yield between chunks)', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
    const files: string[] = [];
    for (let f = 0; f < 3; f++) {
      const file = path.join(dir, `big-${f}.jsonl`);
      // About 8 MB each: more than a few milliseconds of parsing, so the reads take turns.
      const lines = Array.from({ length: 80_000 }, (_, i) => JSON.stringify({ id: f * 1_000_000 + i, pad: 'x'.repeat(80) }));
      await fsp.writeFile(file, lines.join('\n') + '\n');
      files.push(file);
    }
    const cache = new TranscriptCache();
    const reads = await Promise.all(files.map((file) => cache.read(file, counter)));
    reads.forEach((read, f) => {
      expect(read!.skipped).toBe(0);
      expect(read!.lines).toBe(80_000);
      expect(read!.state.ids).toEqual(Array.from({ length: 80_000 }, (_, i) => f * 1_000_000 + i));
    });
  }, 60_000);

  it('parses lines longer than one read, split across reads', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
    const file = path.join(dir, 'long.jsonl');
    const big = 'y'.repeat(700 * 1024);
    await fsp.writeFile(file, `{"id":1,"pad":"${big}"}\n{"id":2}\n{"id":3,"pad":"${big}"}\n`);
    const read = (await new TranscriptCache().read(file, counter))!;
    expect(read.state.ids).toEqual([1, 2, 3]);
    expect(read.skipped).toBe(0);
  });

  it('holds a long torn last line as torn, and parses it whole once the rest is appended', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
    const file = path.join(dir, 'long.jsonl');
    const big = 'é{"}'.repeat(200 * 1024); // multi-byte characters, split anywhere by the reads
    await fsp.writeFile(file, `{"id":1}\n{"id":2,"pad":${JSON.stringify(big).slice(0, 500 * 1024)}`);
    const cache = new TranscriptCache();
    const first = (await cache.read(file, counter))!;
    expect(first.state.ids).toEqual([1]);
    expect(first.skipped).toBe(1); // the torn tail
    await fsp.appendFile(file, `${JSON.stringify(big).slice(500 * 1024)}}\n{"id":3}\n`);
    const second = (await cache.read(file, counter))!;
    expect(second.state.ids).toEqual([1, 2, 3]);
    expect(second.skipped).toBe(0);
  });
});

// A transcript rewritten after it was cached by offset must be parsed from the
// start, not continued from the old offset in the middle of the new text.
describe('TranscriptCache: rewritten transcripts', () => {
  it('starts over when the file shrank below its cached size though not below the cached offset', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-rewrite-'));
    const file = path.join(dir, 't.jsonl');
    // Offset 18 (two complete lines), size 40 (a long torn tail).
    await fsp.writeFile(file, '{"id":1}\n{"id":2}\n{"id":3,"pad":"xxxx"');
    const cache = new TranscriptCache();
    expect((await cache.read(file, counter))!.state.ids).toEqual([1, 2]);
    // Rewritten in place, shorter than before but longer than the offset.
    await fsp.writeFile(file, '{"id":7}\n{"id":8}\n{"id":9}\n');
    const again = (await cache.read(file, counter))!;
    expect(again.state.ids).toEqual([7, 8, 9]);
    expect(again.skipped).toBe(0);
  });

  it('starts over when the file was replaced by another one that is at least as long', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-rewrite-'));
    const file = path.join(dir, 't.jsonl');
    await fsp.writeFile(file, '{"id":1}\n{"id":2}\n');
    const cache = new TranscriptCache();
    expect((await cache.read(file, counter))!.state.ids).toEqual([1, 2]);
    // Atomic replace (write a new file, rename over): a new file, same or larger size.
    const next = path.join(dir, 't.jsonl.new');
    await fsp.writeFile(next, '{"id":5}\n{"id":6}\n{"id":7}\n');
    await fsp.rename(next, file);
    const again = (await cache.read(file, counter))!;
    expect(again.state.ids).toEqual([5, 6, 7]);
    expect(again.skipped).toBe(0);
  });
});

describe('TranscriptCache: overlong lines', () => {
  it('skips and counts a line longer than the limit (spanning several reads) and keeps parsing after it', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-long-'));
    const file = path.join(dir, 't.jsonl');
    const long = JSON.stringify({ id: 99, pad: 'x'.repeat(600 * 1024) }); // longer than one 256 KB read
    await fsp.writeFile(file, `{"id":1}\n${long}\n{"id":2}\n`);
    const cache = new TranscriptCache({ maxLineBytes: 64 * 1024 });
    const first = (await cache.read(file, counter))!;
    expect(first.state.ids).toEqual([1, 2]);
    expect(first.skipped).toBe(1);
    expect(first.lines).toBe(3);
    // The offset still moved past it: an appended line is read incrementally.
    await fsp.appendFile(file, '{"id":3}\n');
    const second = (await cache.read(file, counter))!;
    expect(second.state.ids).toEqual([1, 2, 3]);
    expect(second.skipped).toBe(1);
  });

  it('skips an overlong torn last line without holding it, and counts it once it is complete', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-long-'));
    const file = path.join(dir, 't.jsonl');
    await fsp.writeFile(file, `{"id":1}\n{"id":5,"pad":"${'y'.repeat(300 * 1024)}`);
    const cache = new TranscriptCache({ maxLineBytes: 64 * 1024 });
    const first = (await cache.read(file, counter))!;
    expect(first.state.ids).toEqual([1]);
    expect(first.skipped).toBe(1); // the torn tail
    await fsp.appendFile(file, '"}\n{"id":6}\n');
    const second = (await cache.read(file, counter))!;
    expect(second.state.ids).toEqual([1, 6]);
    expect(second.skipped).toBe(1); // the overlong line, now complete
  });
});

describe('TranscriptCache: a line the reducer cannot take', () => {
  it('skips and counts a line whose reducer throws (e.g. a RangeError from nesting), and keeps parsing after it', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
    const file = path.join(dir, 't.jsonl');
    await fsp.writeFile(file, '{"id":1}\n{"id":2,"deep":true}\n{"id":3}\n');
    const fragile: LineReducer<{ ids: number[] }> = {
      ...counter,
      kind: 'fragile',
      line: (state, value) => {
        if ((value as { deep?: boolean }).deep) throw new RangeError('Maximum call stack size exceeded');
        return counter.line(state, value);
      },
    };
    const read = (await new TranscriptCache().read(file, fragile))!;
    expect(read.state.ids).toEqual([1, 3]);
    expect(read.skipped).toBe(1);
  });

  it('does not read a symlink, a FIFO or a hard-linked file in a transcript\'s place, and counts it as skipped', async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
    const real = path.join(dir, 'real.jsonl');
    await fsp.writeFile(real, '{"id":1}\n');
    await fsp.symlink(real, path.join(dir, 'link.jsonl'));
    const cache = new TranscriptCache();
    // Counted as one skipped thing, its content never read.
    expect(await cache.read(path.join(dir, 'link.jsonl'), counter)).toMatchObject({ lines: 0, skipped: 1 });
    await fsp.link(real, path.join(dir, 'hard.jsonl'));
    expect(await cache.read(path.join(dir, 'hard.jsonl'), counter)).toMatchObject({ lines: 0, skipped: 1 });
    expect(cache.bytesRead).toBe(0);
  });

  it("passes over Claude Code's bookkeeping lines unparsed with the same result, once the session id and cwd are known", async () => {
    const { passOver, ...parseAll } = claudeReducer;
    expect(passOver).toBeDefined();
    const transcripts: string[] = [];
    for (const run of await fsp.readdir(REAL_CLAUDE_FIXTURES)) {
      const projects = path.join(REAL_CLAUDE_FIXTURES, run, 'projects', '-home-dev-work');
      for (const name of await fsp.readdir(projects)) if (name.endsWith('.jsonl')) transcripts.push(path.join(projects, name));
    }
    expect(transcripts.length).toBeGreaterThan(0);
    // A bookkeeping line first (it names the session), and one whose body is not JSON: it is never parsed, so not counted as skipped.
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'transcripts-'));
    const made = path.join(dir, 'made.jsonl');
    const real = await fsp.readFile(transcripts[0]!, 'utf8');
    // An attachment as Claude Code writes it, its type after its value: passed over too, its broken value unread.
    const attachment = '{"parentUuid":"p","attachment":{broken},"type":"attachment","uuid":"u"}\n';
    await fsp.writeFile(made, '{"type":"queue-operation","operation":"enqueue","sessionId":"first-id"}\n' + real + '{"type":"tools-used",broken}\n' + attachment);
    for (const file of [...transcripts, made]) {
      const passed = (await new TranscriptCache().read(file, claudeReducer))!;
      const parsed = (await new TranscriptCache().read(file, { ...parseAll, kind: 'parse-all' }))!;
      expect(passed.state, file).toEqual(parsed.state);
      expect(passed.lines, file).toBe(parsed.lines);
      expect(passed.skipped, file).toBe(file === made ? parsed.skipped - 2 : parsed.skipped);
    }
    const made2 = (await new TranscriptCache().read(made, claudeReducer))!;
    expect(made2.state.sessionId).toBe('first-id'); // read before anything was known: parsed
  });
});
