import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SlimReader, typeFromEnd } from '../../../src/catalog/transcripts/slim-line';
import { claudeReducer } from '../../../src/catalog/sources/claude-code';
import { TranscriptCache } from '../../../src/catalog/transcripts/transcripts';
import { REAL_CLAUDE_FIXTURES } from '../../fixtures/build-home';

const KEEP = ['persistedOutputPath'];
const reader = new SlimReader({ type: 'user', field: 'toolUseResult', keep: KEEP });

/**
 * A line's value as the reader sees it: the field cut to its kept keys. The slimmed line may
 * keep more (keys written with escapes), never less, and nothing else may differ.
 */
function seen(value: unknown): unknown {
  const line = value as Record<string, unknown>;
  const field = line.toolUseResult;
  if (line.type !== 'user' || typeof field !== 'object' || field === null || Array.isArray(field)) return line;
  return { ...line, toolUseResult: Object.fromEntries(Object.entries(field).filter(([key]) => KEEP.includes(key))) };
}

/** The slimmed line parses to what the whole line parses to, as the reader sees it. */
function expectSame(slimmed: string, line: string, label: string): void {
  expect(seen(JSON.parse(slimmed)), label).toEqual(seen(JSON.parse(line)));
}

function slim(line: string): string | undefined {
  const bytes = Buffer.from(`junk${line}junk`);
  return reader.text(bytes, 4, bytes.length - 4);
}

// Braces, brackets, a few escapes and multi-byte text in what is cut.
const bulk = { stdout: 'line {with} [brackets] \\ and ünïcødé ✓\n'.repeat(200) + '"quoted"', stderr: '', interrupted: false, isImage: false };

describe('SlimReader', () => {
  it('cuts the field of a user line to its kept keys, and JSON.parse then gives the same value as the whole line would', () => {
    const lines = [
      JSON.stringify({ type: 'user', message: { role: 'user' }, toolUseResult: { ...bulk, persistedOutputPath: '/tmp/a b/ü.txt' }, uuid: 'u1' }),
      JSON.stringify({ parentUuid: null, toolUseResult: { ...bulk }, type: 'user', n: -1.5e3, ok: true, none: null }),
      // Spaces and new lines where JSON allows them.
      ` { "type" : "user" ,\n "toolUseResult" : { "stdout" : "x" , "persistedOutputPath" : "/p" , "n" : [ 1 , { "a" : "}" } ] } , "z" : [ ] } `,
      // A kept key written with escapes is kept (it is the same key once parsed).
      '{"type":"user","toolUseResult":{"persisted\\u004futputPath":"/escaped","stdout":"s"}}',
      // Repeated field: the last one counts, as for JSON.parse (here a string, left as it is).
      `{"type":"user","toolUseResult":${JSON.stringify(bulk)},"toolUseResult":"plain"}`,
      `{"type":"user","toolUseResult":"plain","toolUseResult":${JSON.stringify({ ...bulk, persistedOutputPath: '/last' })}}`,
      // The same name deeper down is not the field.
      JSON.stringify({ type: 'user', message: { content: [{ toolUseResult: bulk }] }, toolUseResult: { stdout: 'a\\"b\\\\', persistedOutputPath: '/q' } }),
      // A string ending in a backslash, and an empty object.
      '{"type":"user","a":"\\\\","toolUseResult":{}}',
    ];
    lines.forEach((line, i) => {
      const text = slim(line);
      expect(text, `line ${i}`).toBeDefined();
      expect(text!.length, `line ${i}`).toBeLessThanOrEqual(Buffer.byteLength(line));
      expectSame(text!, line, `line ${i}`);
    });
    // A kept key written with escapes is kept.
    expect(JSON.parse(slim(lines[3]!)!).toolUseResult).toEqual({ persistedOutputPath: '/escaped' });
    // The bulk is gone, not parsed.
    expect(slim(lines[0]!)!.length).toBeLessThan(200);
  });

  it('leaves a line whole (undefined) when it is not one to cut or cannot be sure', () => {
    const lines = [
      JSON.stringify({ type: 'assistant', toolUseResult: bulk }), // another type
      JSON.stringify({ type: 'user', message: { content: 'no field' } }), // no field
      `{"type":"user","toolUseResult":${JSON.stringify(bulk)},"type":"assistant"}`, // the last type counts
      JSON.stringify({ type: 'user', toolUseResult: [bulk] }), // not an object
      `{"type":"user","toolUse\\u0052esult":${JSON.stringify(bulk)}}`, // a top-level key written with escapes
      `{"type":"user","toolUseResult":${JSON.stringify(bulk).slice(0, -5)}`, // torn
      `{"type":"user","toolUseResult":{"a":1}} trailing`, // not one value
      `[{"type":"user","toolUseResult":{"a":1}}]`, // not an object
      `{"type":"user","toolUseResult":{"a":1},}`, // a trailing comma
      JSON.stringify({ type: 'user', toolUseResult: { stdout: '"'.repeat(40) } }), // dense with escaped quotes: parsed whole
    ];
    lines.forEach((line, i) => expect(slim(line), `line ${i}`).toBeUndefined());
  });

  it('agrees with JSON.parse on random lines', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = ['a', '"', '\\', '{', '}', '[', ']', ',', ':', ' ', '\n', 'é', '✓', '😀', '\u0000', '/'];
    const text = (): string => Array.from({ length: random(30) }, () => alphabet[random(alphabet.length)]).join('');
    const value = (depth: number): unknown => {
      switch (random(depth > 2 ? 4 : 6)) {
        case 0: return text();
        case 1: return random(1000) - 500;
        case 2: return [true, false, null][random(3)];
        case 3: return random(2) ? 'persistedOutputPath' : 1.25;
        case 4: return Array.from({ length: random(4) }, () => value(depth + 1));
        default: return Object.fromEntries(Array.from({ length: random(4) }, () => [random(3) ? text() : 'persistedOutputPath', value(depth + 1)]));
      }
    };
    let cut = 0;
    for (let i = 0; i < 2000; i++) {
      const field = Object.fromEntries(Array.from({ length: random(5) }, () => [random(2) ? text() : 'persistedOutputPath', value(1)]));
      const line = JSON.stringify({ type: 'user', [`k${random(9)}`]: value(1), toolUseResult: field, uuid: text() }, null, random(3) ? undefined : 1);
      const slimmed = slim(line);
      if (slimmed === undefined) continue;
      cut++;
      expectSame(slimmed, line, line);
    }
    expect(cut).toBeGreaterThan(1000);
  });

  it("gives Claude Code's reducer the same state on the real transcripts as parsing every line whole", async () => {
    const { slim: used, ...whole } = claudeReducer;
    expect(used).toBeDefined();
    const transcripts: string[] = [];
    for (const run of await fsp.readdir(REAL_CLAUDE_FIXTURES)) {
      const projects = path.join(REAL_CLAUDE_FIXTURES, run, 'projects', '-home-dev-work');
      for (const name of await fsp.readdir(projects)) if (name.endsWith('.jsonl')) transcripts.push(path.join(projects, name));
    }
    let cutLines = 0;
    for (const file of transcripts) {
      const bytes = await fsp.readFile(file);
      for (let start = 0, nl = bytes.indexOf(10); nl !== -1; start = nl + 1, nl = bytes.indexOf(10, start)) if (used!.text(bytes, start, nl) !== undefined) cutLines++;
      const slimmed = (await new TranscriptCache().read(file, claudeReducer))!;
      const parsed = (await new TranscriptCache().read(file, { ...whole, kind: 'whole' }))!;
      expect(slimmed.state, file).toEqual(parsed.state);
      expect([slimmed.lines, slimmed.skipped], file).toEqual([parsed.lines, parsed.skipped]);
    }
    // The fixtures hold spilled results: the comparison covers cut lines.
    expect(cutLines).toBeGreaterThan(0);
  });
});

describe('typeFromEnd', () => {
  const typeOf = (line: string): string | undefined => {
    const bytes = Buffer.from(`\\"${line}\\"`);
    return typeFromEnd(bytes, 2, bytes.length - 2);
  };

  it("finds the top-level type after Claude Code's one large value, and nothing it cannot be sure of", () => {
    const attachment = { type: 'prompt_snapshot', text: 'a "type":"user" {in} [text] \\'.repeat(50) };
    expect(typeOf(JSON.stringify({ parentUuid: 'p', isSidechain: false, attachment, type: 'attachment', uuid: 'u', n: -1.5e3, ok: true, none: null }))).toBe('"attachment"');
    expect(typeOf(` { "a" : { } , "type" : "attachment" , "b" : 2 } \n`)).toBe('"attachment"');
    // The last of repeated keys counts, as for JSON.parse.
    expect(typeOf('{"type":"attachment","x":{},"type":"user"}')).toBe('"user"');
    // A string that looks like the member is one value.
    expect(typeOf('{"type":"user","message":{},"note":"\\"type\\":\\"attachment\\""}')).toBeUndefined();
    expect(typeOf('{"type":"user","note":"\\\\","x":"\\",\\"type\\":\\"attachment"}')).toBe('"user"');
    const unsure = [
      '{"type":"user","message":{"type":"attachment"}}', // an object after it: the scan stops there
      '{"message":{},"x":{"type":"attachment"}}', // nested only
      '{"typ\\u0065":"attachment"}', // a key written with an escape
      '[{"type":"attachment"}]', // not an object
      '{}',
      '{"type":"attachment"', // torn
      '',
      // The members after the body longer than the part of the line it looks at: parsed, however they are written.
      JSON.stringify({ attachment: {}, type: 'attachment', note: 'x'.repeat(5000) }),
      JSON.stringify({ attachment: {}, type: 'attachment', note: '"'.repeat(5000) }),
    ];
    for (const line of unsure) expect(typeOf(line), line).toBeUndefined();
  });

  it('agrees with JSON.parse on random lines', () => {
    let seed = 11;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n); // the high bits: the low ones of this generator repeat soon
    };
    const alphabet = ['a', '"', '\\', '{', '}', ',', ':', ' ', 'é', '😀', 'type', '"type":"x"'];
    const text = (): string => Array.from({ length: random(12) }, () => alphabet[random(alphabet.length)]).join('');
    const scalar = (): unknown => [text(), random(1000) - 500, true, false, null, 2.5e-3][random(6)];
    let found = 0;
    for (let i = 0; i < 3000; i++) {
      const members: Array<[string, unknown]> = Array.from({ length: random(6) }, () => [random(4) ? text() : 'type', random(4) ? scalar() : { type: scalar() }]);
      const line = JSON.stringify(Object.fromEntries(members), null, random(4) ? undefined : 1);
      const raw = typeOf(line);
      if (raw === undefined) continue;
      found++;
      expect(JSON.parse(raw), line).toEqual((JSON.parse(line) as { type: unknown }).type);
    }
    expect(found).toBeGreaterThan(300);
  });
});
