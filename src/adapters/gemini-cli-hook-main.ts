// dist/gemini-cli-hook.js: Gemini CLI's AfterTool and AfterAgent hooks on their own (what
// `spillway hook install gemini-cli` wires in), without the rest of the CLI,
// so each shell call waits only for Node start-up plus the hook's own work.
import { geminiOptionsFromEnv, handleGeminiHookInput } from './gemini-cli-hook';
import { uploadQueuedInBackground } from '../spill/remote/configured';

async function main(): Promise<void> {
  try {
    const chunks: Buffer[] = [];
    if (!process.stdin.isTTY) for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    const line = await handleGeminiHookInput(Buffer.concat(chunks).toString('utf8'), {
      ...geminiOptionsFromEnv(process.env),
      warn: (m) => process.stderr.write(`spillway: ${m}\n`),
    });
    if (line !== undefined) process.stdout.write(line);
    // The answer is out: copies owed to a bucket go up in a process of their own.
    await uploadQueuedInBackground(process.env);
  } finally {
    // Exit 0 whatever happens: a failing hook must never fail the tool call.
    process.exitCode = 0;
  }
}

void main();
