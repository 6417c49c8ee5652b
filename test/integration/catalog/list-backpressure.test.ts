// `spillway list` waits for a slower reader: each session is read from the
// index and written only once standard output has caught up. Without that, a
// listing piped to a slow reader (`| jq`, `| less`) queued all of its output
// in memory (50 MB for 100,000 blobs).
import { mkdtempSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main';
import type { CliIO } from '../../../src/cli/io';

const SESSIONS = 40;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'spillway-backpressure-'));
  for (let s = 0; s < SESSIONS; s++) {
    const id = `${String(s).padStart(8, '0')}-0000-4000-8000-000000000000`;
    const results = path.join(home, 'projects', '-p', id, 'tool-results');
    await fsp.mkdir(results, { recursive: true });
    await fsp.writeFile(path.join(results, `toolu_${s}.txt`), `output ${s}\n`);
  }
});
afterAll(() => fsp.rm(home, { recursive: true, force: true }));

/** An in-process IO whose reader has caught up only when `release()` is called. */
function slowReader(): { io: CliIO; written: () => string; writes: () => number; release: () => void } {
  let out = '';
  let writes = 0;
  let release = (): void => undefined;
  const io: CliIO = {
    stdout: (text) => {
      out += String(text);
      writes++;
    },
    stderr: () => undefined,
    readStdin: async () => Buffer.alloc(0),
    env: { HOME: home, XDG_CACHE_HOME: path.join(home, '.cache') },
    caughtUp: () => new Promise<void>((resolve) => (release = resolve)),
  };
  return { io, written: () => out, writes: () => writes, release: () => release() };
}

describe('list and a slow reader', () => {
  for (const json of [true, false]) {
    it(`writes no further session until the reader catches up (${json ? '--json' : 'table'})`, async () => {
      const reader = slowReader();
      let done = false;
      const run = main(['list', ...(json ? ['--json'] : []), '--no-default-roots', '--root', home], reader.io).finally(() => (done = true));
      // Let the scan finish and the first session be written, then check the command waits.
      for (let i = 0; i < 200 && reader.writes() < 2; i++) await new Promise((r) => setTimeout(r, 10));
      const before = reader.writes();
      expect(before).toBeGreaterThanOrEqual(2); // the header, then the first session
      await new Promise((r) => setTimeout(r, 100));
      expect(reader.writes()).toBe(before);
      expect(done).toBe(false);
      // Released one session at a time, it goes on to the end.
      while (!done) {
        reader.release();
        await new Promise((r) => setImmediate(r));
      }
      expect(await run).toBe(0);
      if (json) expect((JSON.parse(reader.written()) as { sessions: unknown[] }).sessions).toHaveLength(SESSIONS);
      else expect(reader.written()).toContain(`${SESSIONS} session(s), ${SESSIONS} blob(s)`);
    });
  }
});
