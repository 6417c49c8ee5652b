// Waits for a queue to be empty the way a user would make sure of it: `spillway upload` again until one run of its
// own (not "another upload is running": a detached uploader still at work) leaves nothing queued. A queue seen empty
// is not enough: an uploader that has just sent a transcript queues it again if it grew meanwhile. An error fails at once.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

type UploadRun = { code: number | null; stdout: string; stderr: string };

export async function uploadAll(queue: string, upload: () => Promise<UploadRun> | UploadRun): Promise<void> {
  const queued = () => existsSync(queue) && readdirSync(queue).some((n) => n.endsWith('.pending.json'));
  for (;;) {
    const r = await upload();
    if (r.code !== 0) throw new Error(`spillway upload failed: ${r.stderr}`);
    if (r.stdout.startsWith('another upload is running')) await new Promise((done) => setTimeout(done, 100));
    else if (!queued()) return;
  }
}

/** Waits (at most `ms`) for a queue a detached uploader is draining to be empty: as a slow next API call would. */
export async function queueEmptied(queue: string, ms = 30_000): Promise<void> {
  const queued = () => existsSync(queue) && readdirSync(queue).some((n) => n.endsWith('.pending.json'));
  for (let waited = 0; queued() && waited < ms; waited += 50) await new Promise((done) => setTimeout(done, 50));
}

/** One `spillway upload` by the CLI `cli`, in this process's environment with `env` over it: what uploadAll repeats. */
export function spillwayUpload(cli: string, env: NodeJS.ProcessEnv): () => UploadRun {
  return () => {
    const r = spawnSync(process.execPath, [cli, 'upload'], { encoding: 'utf8', env: { ...process.env, ...env } });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
}
