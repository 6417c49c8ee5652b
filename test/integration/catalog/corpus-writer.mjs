// Changes a Claude Code corpus (`node corpus-writer.mjs PROJECTS_DIR`) until
// it is killed, the way agents and their users do while `spillway` runs: a
// blob added with the call that names it, a blob grown (its mtime put back
// or not), a blob deleted, a transcript line written in two pieces, a new
// session, a session's blobs all removed. Each change is followed by a pause
// of a millisecond, so it shares the machine. Prints the number of changes
// made when it is stopped (SIGTERM).
import { appendFileSync, mkdirSync, readdirSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

const projects = readdirSync(process.argv[2]).map((p) => path.join(process.argv[2], p));
// The same changes in the same order each run (a linear congruential generator): only their timing differs.
let seed = 1;
const pick = (items) => items[((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16) % items.length];
let made = 0;

function change() {
  const project = pick(projects);
  const session = pick(readdirSync(project).filter((e) => e.endsWith('.jsonl'))).slice(0, -'.jsonl'.length);
  const transcript = path.join(project, `${session}.jsonl`);
  const results = path.join(project, session, 'tool-results');
  const blobs = () => readdirSync(results);
  // A session's lines for a call whose output was saved to `file`.
  const call = (sessionId, id, file) => {
    const timestamp = new Date().toISOString();
    return [
      { type: 'assistant', sessionId, timestamp, message: { role: 'assistant', content: [{ type: 'tool_use', id, name: 'Bash', input: { command: `step ${made}` } }] } },
      { type: 'user', sessionId, timestamp, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: `Full output saved to: ${file}` }] } },
    ].map((line) => JSON.stringify(line) + '\n').join('');
  };
  switch (made % 6) {
    case 0: {
      const id = `toolu_w${made}`;
      const file = path.join(results, `${id}.txt`);
      writeFileSync(file, `written ${made}\n`.repeat(1 + (made % 50)));
      appendFileSync(transcript, call(session, id, file));
      break;
    }
    case 1: {
      // Grown, and every other time its mtime put back (as `cp -p` or a restore leaves it): only its size tells.
      const blob = pick(blobs());
      if (!blob) break;
      const file = path.join(results, blob);
      const before = statSync(file);
      appendFileSync(file, `grown ${made}\n`);
      if (made % 12 === 1) utimesSync(file, before.atime, before.mtime);
      break;
    }
    case 2: {
      const blob = pick(blobs());
      if (blob) unlinkSync(path.join(results, blob));
      break;
    }
    case 3: {
      const line = JSON.stringify({ type: 'assistant', sessionId: session, message: { role: 'assistant', content: [{ type: 'text', text: 'torn' }] } }) + '\n';
      appendFileSync(transcript, line.slice(0, 20));
      appendFileSync(transcript, line.slice(20));
      break;
    }
    case 4: {
      const id = `ffffffff-0000-4000-8000-${String(made).padStart(12, '0')}`;
      const file = path.join(project, id, 'tool-results', 'toolu_new.txt');
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `new ${made}\n`);
      writeFileSync(path.join(project, `${id}.tmp`), call(id, 'toolu_new', file));
      renameSync(path.join(project, `${id}.tmp`), path.join(project, `${id}.jsonl`));
      break;
    }
    default:
      if (made % 30 === 5) for (const blob of blobs()) unlinkSync(path.join(results, blob));
  }
}

process.on('SIGTERM', () => {
  console.log(made);
  process.exit(0);
});
for (;;) {
  change();
  made++;
  await new Promise((resolve) => setTimeout(resolve, 1));
}
