// An unreadable blob folder or transcript: said on stderr, and never stored in
// the index as a session holding nothing (its blobs show again once it is
// readable, though its mtime never changed). Root reads anything: as root the
// CLI runs as `nobody` (setpriv), so the permissions bite.
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backdate } from '../integration/catalog/helpers';
import { caseDirs, cli, collect, hostileFile, write, type Run } from './helpers';

const { base } = hostileFile('unreadable');
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

/** The CLI as a user whom permissions bind. */
function runUnprivileged(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const command = [process.execPath, cli(), ...args];
  const child = asRoot ? spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...command], { env, stdio: 'pipe' }) : spawn(command[0]!, command.slice(1), { env, stdio: 'pipe' });
  return collect(child, { timeoutMs: 60_000 });
}

async function chownTree(dir: string): Promise<void> {
  await fsp.lchown(dir, NOBODY, NOBODY);
  const stat = await fsp.lstat(dir);
  if (stat.isDirectory()) for (const name of await fsp.readdir(dir)) await chownTree(path.join(dir, name));
}

interface Listed {
  sessions: Array<{ id: string; blobs: Array<{ path: string }> }>;
}

describe('unreadable folders and transcripts', () => {
  it('are reported, and their sessions show again once readable (the index never hides them)', async () => {
    const c = await caseDirs(base(), 'unreadable');
    const session = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    const project = path.join(c.claudeProjects, '-work');
    const blob = (n: number) => path.join(project, session(n), 'tool-results', `toolu_0${n}.txt`);
    for (const n of [1, 2, 3]) {
      await write(path.join(project, `${session(n)}.jsonl`), JSON.stringify({ type: 'user', sessionId: session(n), cwd: '/work', message: { role: 'user', content: `prompt ${n}` } }) + '\n');
      await write(blob(n), `output ${n}\n`);
    }
    await backdate(c.dir);
    if (asRoot) {
      await fsp.chmod(base(), 0o711);
      await chownTree(c.dir);
    }
    const unreadableFolder = path.dirname(blob(1));
    const unreadableTranscript = path.join(project, `${session(2)}.jsonl`);
    await fsp.chmod(unreadableFolder, 0o000);
    await fsp.chmod(unreadableTranscript, 0o000);

    const hidden = await runUnprivileged(['list', '--json'], c.env);
    expect(hidden.code).toBe(0);
    expect(hidden.stderr).toContain(`cannot read ${unreadableFolder} (EACCES)`);
    expect(hidden.stderr).toContain(`cannot describe ${path.join(project, session(2))}`);
    expect((JSON.parse(hidden.stdout.toString()) as Listed).sessions.map((s) => s.id)).toEqual([session(3)]);

    // Readable again: chmod changes no mtime, yet the next run (index present) lists both.
    await fsp.chmod(unreadableFolder, 0o700);
    await fsp.chmod(unreadableTranscript, 0o600);
    const shown = await runUnprivileged(['list', '--json'], c.env);
    expect(shown.stderr).toBe('');
    const blobs = (JSON.parse(shown.stdout.toString()) as Listed).sessions.flatMap((s) => s.blobs.map((b) => b.path));
    expect(blobs.sort()).toEqual([blob(1), blob(2), blob(3)]);
  });
});
