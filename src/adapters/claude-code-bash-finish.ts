// The `bash-finish` entry (dist/hook.js and `spillway hook claude-code
// bash-finish`): what a wrapped Bash command runs once the command ended.
// A non-zero exit makes the wrapper print the captured output whole instead.
import { finishCapture } from './claude-code-bash';

export async function runBashFinish(
  args: string[],
  out: { stdout: (text: string) => void; stderr: (text: string) => void },
): Promise<number> {
  const [digestBytes, file, status, command] = args;
  const budget = Number(digestBytes);
  if (!file || status === undefined || command === undefined || !Number.isFinite(budget) || budget <= 0) {
    out.stderr('usage: bash-finish DIGEST_BYTES FILE STATUS COMMAND\n');
    return 2;
  }
  try {
    out.stdout(await finishCapture(file, status, command, Math.floor(budget), { warn: (m) => out.stderr(`spillway: ${m}\n`) }));
    return 0;
  } catch (err) {
    out.stderr(`spillway: could not digest ${file}, printing it whole: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
