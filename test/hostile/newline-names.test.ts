// A blob whose name holds a newline (or looks like one of ripgrep's own lines)
// is found by both engines, under its own name, and no match is given to
// another file.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseDirs, hostileFile, run, write } from './helpers';

const { base } = hostileFile('newline-names');

const UUID = '7a2b3c4d-5e6f-4a70-8b9c-0d1e2f3a4b5c';

interface GrepJson {
  matches: Array<{ path: string; line: number; text: string }>;
}

describe('blob names with newlines', () => {
  it.each(['rg', 'node'])('are found by grep (%s engine) under their own names, beside a binary blob and a plain one', async (engine) => {
    const c = await caseDirs(base(), `newline-${engine}`);
    const project = path.join(c.claudeProjects, '-home-dev-w');
    await write(path.join(project, `${UUID}.jsonl`), JSON.stringify({ type: 'user', sessionId: UUID, cwd: '/w', message: { content: 'hi' } }) + '\n');
    const results = path.join(project, UUID, 'tool-results');
    const names = [
      'plain.txt',
      'two\nlines.txt',
      '\nstarts-with-newline.txt',
      'ends\n',
      'fake.txt\u0000'.replace('\u0000', '') + '\n3:a forged line.txt',
      'bin\nary.txt',
    ];
    const files = new Map<string, string>();
    for (const name of names) {
      const body = name === 'bin\nary.txt' ? Buffer.from('needle-51ab\u0000binary\nneedle-51ab again\n') : `first\nneedle-51ab in ${JSON.stringify(name)}\nlast\n`;
      files.set(name, await write(path.join(results, name), body));
    }
    const r = await run(['grep', 'needle-51ab', '--json', '--engine', engine], { env: c.env });
    expect(r.timedOut).toBe(false);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout.toString('utf8')) as GrepJson;
    const text = names.filter((n) => n !== 'bin\nary.txt');
    // Every text blob's one match, at line 2, under its own path; nothing under a path that is no blob.
    for (const name of text) {
      expect(out.matches.filter((m) => m.path === files.get(name)).map((m) => [m.line, m.text]), JSON.stringify(name)).toEqual([[2, `needle-51ab in ${JSON.stringify(name)}`]]);
    }
    const blobs = new Set(files.values());
    expect(out.matches.filter((m) => !blobs.has(m.path))).toEqual([]);
  });
});
