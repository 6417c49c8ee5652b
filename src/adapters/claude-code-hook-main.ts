// dist/hook.js: the Claude Code command hook on its own, the same code as
// `spillway hook claude-code` without the rest of the CLI (catalog, watcher),
// so the agent waits only for Node start-up plus the hook's own work.
// Usage (what `spillway hook install claude-code` writes): node dist/hook.js claude-code
// The Bash capture's finish step: node dist/hook.js claude-code bash-finish DIGEST_BYTES FILE STATUS COMMAND
import { runBashFinish } from './claude-code-bash-finish';
import { runClaudeCodeHook } from './claude-code-hook';
import { failIfUnfinished } from '../common/unfinished';

async function main(): Promise<void> {
  const [agent, sub, ...rest] = process.argv.slice(2);
  if (agent !== 'claude-code') {
    process.stderr.write(`usage: node hook.js claude-code (got ${agent ?? 'nothing'})\n`);
    return;
  }
  if (sub === 'bash-finish') {
    const finish = runBashFinish(rest, { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) });
    // A finish step that never ends its work fails, so that the wrapper prints the captured output instead.
    failIfUnfinished(finish, 1, (text) => process.stderr.write(`spillway bash-finish: ${text}`));
    process.exitCode = await finish;
    return;
  }
  try {
    const chunks: Buffer[] = [];
    if (!process.stdin.isTTY) for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    await runClaudeCodeHook(Buffer.concat(chunks).toString('utf8'), process.env, {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
    }, { script: process.argv[1]!, viaCli: false });
  } finally {
    // Exit 0 whatever happens: a failing hook must never fail the tool call.
    process.exitCode = 0;
  }
}

void main();
