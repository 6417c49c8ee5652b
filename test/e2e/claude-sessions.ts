// Claude Code sessions written as Claude Code 2.1 writes spilled Bash outputs: a transcript naming each blob in its
// tool result, the blobs in the session's tool-results folder, every file's time set.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ClaudeSession {
  id: string;
  transcript: string;
  folder: string;
  /** The blobs' paths, newest first. */
  blobs: string[];
}

/**
 * A session in `home` of `blobs` Bash outputs of `bytes` each, last changed at `at` (ms), blob j written j seconds
 * before it; `title` is its first prompt.
 */
export function writeClaudeSession(home: string, spec: { id: string; title: string; at: number; blobs: number; bytes: number; project?: string }): ClaudeSession {
  const project = path.join(home, '.claude', 'projects', spec.project ?? '-home-dev-work');
  const folder = path.join(project, spec.id, 'tool-results');
  fs.mkdirSync(folder, { recursive: true });
  const base = { sessionId: spec.id, cwd: '/home/dev/work', isSidechain: false };
  const lines: unknown[] = [{ ...base, type: 'user', timestamp: new Date(spec.at - spec.blobs * 1000).toISOString(), message: { role: 'user', content: spec.title } }];
  const blobs: string[] = [];
  for (let j = spec.blobs - 1; j >= 0; j--) {
    const toolUseId = `toolu_${spec.id.replace(/-/g, '').slice(0, 12)}${String(j).padStart(8, '0')}`;
    const blob = path.join(folder, `${toolUseId}.txt`);
    const line = `${spec.title}: build step ${j}\n`;
    fs.writeFileSync(blob, line.repeat(Math.ceil(spec.bytes / line.length)).slice(0, spec.bytes), { mode: 0o600 });
    const at = new Date(spec.at - j * 1000);
    fs.utimesSync(blob, at, at);
    blobs.unshift(blob);
    const stamp = { ...base, timestamp: at.toISOString() };
    lines.push(
      { ...stamp, type: 'assistant', message: { id: `msg_${spec.id}_${j}`, role: 'assistant', model: 'm', content: [{ type: 'tool_use', id: toolUseId, name: 'Bash', input: { command: `make step-${j}` } }], usage: { input_tokens: 10, output_tokens: 5 } } },
      { ...stamp, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: `<persisted-output>\nFull output saved to: ${blob}\n</persisted-output>` }] } },
    );
  }
  const transcript = path.join(project, `${spec.id}.jsonl`);
  fs.writeFileSync(transcript, lines.map((l) => JSON.stringify(l)).join('\n') + '\n', { mode: 0o600 });
  const at = new Date(spec.at);
  for (const file of [transcript, path.dirname(folder), folder]) fs.utimesSync(file, at, at);
  return { id: spec.id, transcript, folder, blobs };
}
