// The large-output step of the shell prefix (claude-code-prefix.sh), run once a
// Bash command ended with more output than the threshold:
//   node hook.js claude-code prefix-finish STATUS COMMAND_STRING
// Its stdout is Claude Code's own output file for the call (O_APPEND, stdout and
// stderr of the command in order). It copies that file whole into the session's
// Spillway folder, records it in the manifest, then replaces the file's content
// with a digest (head, failure lines with their line numbers, tail, the exit
// code, the copy's path). Any failure before that last step leaves the file as
// the command wrote it: what Claude Code would have shown without Spillway.
import { constants as C, promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { digestFile } from '../spill/digest';
import { LOCAL_RETRIEVAL_HINT, type LocalSpillStore } from '../spill/local-store';
import { openSpillStore } from '../spill/open-store';
import { DEFAULT_DIGEST_BYTES, labelFor, MIN_DIGEST_BYTES } from '../spill/policy';
import { CLAUDE_CODE_SPILL_FOLDER } from './claude-code-event';
import { commandOfShellString } from './claude-code-shell-string';

/** The descriptor the shell gave this process as stdout: Claude Code's output file. */
const OUTPUT_FD = 1;
const CAPTURE_PREFIX = 'bash-';

export interface PrefixFinishInput {
  status: string;
  shellString: string;
  env: NodeJS.ProcessEnv;
  /** Readable path of the output file (Linux: /proc/self/fd/1). */
  outputPath?: string;
  /** Descriptor to truncate and write the digest to. */
  outputFd?: number;
}

/** The session folder of a Claude Code session: `<config>/projects/<project>/<session id>`, where its transcript lies. */
export function sessionDirFor(sessionId: string, env: NodeJS.ProcessEnv): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) return undefined;
  const configDir = env.CLAUDE_CONFIG_DIR?.trim() || path.join(env.HOME?.trim() || os.homedir(), '.claude');
  const projects = path.join(configDir, 'projects');
  let names: string[];
  try {
    names = fs.readdirSync(projects);
  } catch {
    return undefined;
  }
  for (const name of names) {
    if (fs.existsSync(path.join(projects, name, `${sessionId}.jsonl`))) return path.join(projects, name, sessionId);
  }
  return undefined;
}

/** What the model reads after the digest: the exit code and where the whole output is. */
export function captureTrailer(status: string, file: string): string {
  return /^\d+$/.test(status)
    ? `[spillway: the command exited with code ${status}; its complete output (stdout and stderr) is in ${file}]`
    : `[spillway: the command ended (${status}); its complete output (stdout and stderr) is in ${file}]`;
}

/** Does the work; throws (leaving the output file as it was) when anything before the rewrite fails. */
export async function finishLargeOutput(input: PrefixFinishInput): Promise<{ file: string }> {
  const sessionId = input.env.CLAUDE_CODE_SESSION_ID ?? '';
  const sessionDir = sessionDirFor(sessionId, input.env);
  if (!sessionDir) throw new Error(`no Claude Code session folder for session '${sessionId}'`);
  const spillDir = path.join(sessionDir, CLAUDE_CODE_SPILL_FOLDER);
  const store = openSpillStore({ root: sessionDir, layout: { dirFor: () => spillDir }, agent: 'claude-code', env: input.env });
  const outputPath = input.outputPath ?? '/proc/self/fd/1';
  const outputFd = input.outputFd ?? OUTPUT_FD;
  const callId = taskIdOf(outputPath) ?? `${Date.now().toString(36)}-${process.pid}`;
  const file = await createUnique(store, sessionId, callId);
  await copyInto(outputPath, file);
  const digestBytes = Math.max(MIN_DIGEST_BYTES, positive(input.env.SPILLWAY_DIGEST_BYTES) ?? DEFAULT_DIGEST_BYTES);
  const command = commandOfShellString(input.shellString);
  let hint = LOCAL_RETRIEVAL_HINT;
  try {
    // Recorded before the digest is written: a mirrored store's hint names the bucket's copy too.
    hint = (
      await store.recordExternal({
        owner: { sessionId },
        source: { toolName: 'Bash', callId, label: labelFor({ command }) },
        file: path.basename(file),
        args: { command },
      })
    ).retrievalHint;
  } catch {
    // The digest still names the file; only the catalog loses the tool name.
  }
  const digest = await digestFile(file, { budgetBytes: digestBytes, toolName: 'Bash', locator: file, retrievalHint: hint });
  const text = `${digest}${digest.endsWith('\n') ? '' : '\n'}${captureTrailer(input.status, file)}\n`;
  fs.ftruncateSync(outputFd, 0);
  fs.writeSync(outputFd, text);
  return { file };
}

/** Claude Code names a call's output file `<task id>.output`. */
function taskIdOf(outputPath: string): string | undefined {
  try {
    const name = path.basename(fs.readlinkSync(outputPath));
    return /^[A-Za-z0-9_-]+\.output$/.test(name) ? name.slice(0, -'.output'.length) : undefined;
  } catch {
    return undefined;
  }
}

async function createUnique(store: LocalSpillStore, sessionId: string, callId: string): Promise<string> {
  for (let n = 0; ; n++) {
    try {
      return await store.createEmpty({ sessionId }, `${CAPTURE_PREFIX}${callId}${n === 0 ? '' : `-${n}`}.txt`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 20) throw err;
    }
  }
}

/** Copies the output file into the (new, empty, 0600) capture file, never through a symlink. */
async function copyInto(from: string, to: string): Promise<void> {
  const src = await fsp.open(from, C.O_RDONLY);
  try {
    const dst = await fsp.open(to, C.O_WRONLY | C.O_NOFOLLOW);
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (let at = 0; ; ) {
        const { bytesRead } = await src.read(buf, 0, buf.length, at);
        if (bytesRead === 0) break;
        await dst.write(buf, 0, bytesRead);
        at += bytesRead;
      }
    } finally {
      await dst.close();
    }
  } finally {
    await src.close();
  }
}

function positive(raw: string | undefined): number | undefined {
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== '' && Number.isFinite(n) && n > 0 ? Math.floor(n) : undefined;
}
