// dist/hook.js: the Claude Code command hook on its own, the same code as
// `spillway hook claude-code` without the rest of the CLI (catalog, watcher),
// so the agent waits only for Node start-up plus the hook's own work.
// Usage (what `spillway hook install claude-code` writes): node dist/hook.js claude-code
// The shell prefix's large-output step: node dist/hook.js claude-code prefix-finish STATUS COMMAND_STRING
import { runClaudeCodeHook } from './claude-code-hook';
import { failIfUnfinished } from '../common/unfinished';
import { finishLargeOutput } from './claude-code-prefix-finish';
import { uploadQueuedInBackground } from '../spill/remote/configured';

async function main(): Promise<void> {
  const [agent, sub, ...rest] = process.argv.slice(2);
  if (agent !== 'claude-code') {
    process.stderr.write(`usage: node hook.js claude-code (got ${agent ?? 'nothing'})\n`);
    return;
  }
  if (sub === 'prefix-finish') {
    const [status, shellString] = rest;
    if (status === undefined || shellString === undefined) {
      process.stderr.write('usage: node hook.js claude-code prefix-finish STATUS COMMAND_STRING\n');
      process.exitCode = 2;
      return;
    }
    // Its stdout is Claude Code's output file, written only once the digest is ready: on any failure it is left alone.
    const finish = finishLargeOutput({ status, shellString, env: process.env }).then(
      () => 0,
      (err: unknown) => {
        process.stderr.write(`spillway: output left as it was: ${err instanceof Error ? err.message : String(err)}\n`);
        return 1;
      },
    );
    failIfUnfinished(finish, 1, (text) => process.stderr.write(`spillway prefix-finish: ${text}`));
    process.exitCode = await finish;
    // The output file is rewritten: copies owed to a bucket go up in a process of their own.
    await uploadQueuedInBackground(process.env);
    return;
  }
  try {
    const chunks: Buffer[] = [];
    if (!process.stdin.isTTY) for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    await runClaudeCodeHook(Buffer.concat(chunks).toString('utf8'), process.env, {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
    });
  } finally {
    // Exit 0 whatever happens: a failing hook must never fail the tool call.
    process.exitCode = 0;
  }
}

void main();
