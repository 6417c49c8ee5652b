// dist/codex-hook.js: the Codex CLI hook on its own (no catalog), so Codex
// waits only for Node start-up plus the hook's own work.
// Usage (what `spillway hook install codex` writes): node dist/codex-hook.js codex
// The capture's finish step: node dist/codex-hook.js codex finish DIGEST_BYTES FILE FINAL STATUS COMMAND
// Where no capture can be made: ... | node dist/codex-hook.js codex digest INLINE_BYTES DIGEST_BYTES 3<status pipe
import { runCodexFinish, runCodexHook } from './codex-capture';
import { processPipeDigestIo, runCodexPipeDigest } from './codex-pipe-digest';
import { failIfUnfinished } from '../common/unfinished';

async function main(): Promise<void> {
  const [agent, sub, ...rest] = process.argv.slice(2);
  const out = { stdout: (t: string) => process.stdout.write(t), stderr: (t: string) => process.stderr.write(t) };
  if (agent !== 'codex') {
    process.stderr.write(`usage: node codex-hook.js codex (got ${agent ?? 'nothing'})\n`);
    return;
  }
  if (sub === 'digest') {
    // The output goes out whole when the digest cannot be made: exit 1 lets the wrapper pass the rest on.
    process.exitCode = await runCodexPipeDigest(rest, processPipeDigestIo).catch((err: unknown) => {
      process.stderr.write(`spillway codex digest: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    });
    process.exit();
  }
  if (sub === 'finish') {
    const finish = runCodexFinish(rest, out);
    // A finish step that never ends its work fails, so that the wrapper prints the captured output instead.
    failIfUnfinished(finish, 1, (text) => process.stderr.write(`spillway codex finish: ${text}`));
    process.exitCode = await finish;
    return;
  }
  try {
    const chunks: Buffer[] = [];
    if (!process.stdin.isTTY) for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    await runCodexHook(Buffer.concat(chunks).toString('utf8'), process.env, out, { script: process.argv[1]!, viaCli: false });
  } finally {
    // Exit 0 whatever happens: a failing hook must never fail the tool call.
    process.exitCode = 0;
  }
}

void main();
