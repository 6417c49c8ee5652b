// pi sessions as pi 1.6 writes them, for what a person sees at 300 px: two
// sessions of one agent in one folder, told apart by their prompts, each with
// a bash log whose lines start with a timestamp (the width a search row must
// not spend on it). Written into a fixture home's pi folders.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface PiBashSession {
  id: string;
  prompt: string;
  transcript: string;
  log: string;
  /** The line (1-based) holding `needle`, and the line's text. */
  line: number;
  text: string;
}

const jsonl = (values: unknown[]): string => values.map((v) => JSON.stringify(v)).join('\n') + '\n';

/** A pi session whose one bash call wrote `lines` lines to a log, line `at` saying `needle`. */
export function writePiBashSession(home: string, o: { prompt: string; command: string; lines: number; at: number; needle: string; start: number }): PiBashSession {
  const id = crypto.randomUUID();
  const dir = path.join(home, '.pi', 'agent', 'sessions', '--home-dev-acme--');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(home, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  const log = path.join(tmp, `pi-bash-${crypto.randomBytes(8).toString('hex')}.log`);
  let text = '';
  const body: string[] = [];
  for (let i = 1; i <= o.lines; i++) {
    const stamp = new Date(o.start + i * 137).toISOString();
    const line = i === o.at ? `${stamp} [runner] ${o.command}: ${o.needle}` : `${stamp} [runner] step ${i}: compiled ${i % 17} modules, 0 warnings`;
    if (i === o.at) text = line;
    body.push(line);
  }
  fs.writeFileSync(log, `${body.join('\n')}\n`, { mode: 0o644 });
  let t = o.start;
  const ts = () => new Date((t += 1000)).toISOString();
  const usage = (input: number, output: number) => ({ input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output });
  const transcript = path.join(dir, `${new Date(o.start).toISOString().replace(/[:.]/g, '-')}_${id}.jsonl`);
  fs.writeFileSync(
    transcript,
    jsonl([
      { type: 'session', version: 3, id, timestamp: ts(), cwd: '/home/dev/acme' },
      { type: 'model_change', id: 'e0', parentId: null, timestamp: ts(), provider: 'faux', modelId: 'faux-1' },
      { type: 'message', id: 'e1', parentId: 'e0', timestamp: ts(), message: { role: 'user', content: [{ type: 'text', text: o.prompt }] } },
      { type: 'message', id: 'e2', parentId: 'e1', timestamp: ts(), message: { role: 'assistant', content: [{ type: 'toolCall', id: 'call_bash_1', name: 'bash', arguments: { command: o.command } }], usage: usage(1500, 40) } },
      { type: 'message', id: 'e3', parentId: 'e2', timestamp: ts(), message: { role: 'toolResult', toolCallId: 'call_bash_1', toolName: 'bash', content: [{ type: 'text', text: body.slice(-40).join('\n') }], details: { fullOutputPath: log, truncation: { truncated: true } }, isError: false } },
      { type: 'message', id: 'e4', parentId: 'e3', timestamp: ts(), message: { role: 'assistant', content: [{ type: 'text', text: 'The run timed out; see the log.' }], usage: usage(3900, 20) } },
    ]),
    { mode: 0o600 },
  );
  return { id, prompt: o.prompt, transcript, log, line: o.at, text };
}
