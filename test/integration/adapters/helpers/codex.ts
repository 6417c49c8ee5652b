// Runs the real Codex CLI (installed by `node scripts/setup.mjs codex` into
// .cache/codex) headless and offline: `codex exec --json` with an isolated
// CODEX_HOME and a model provider pointing at the mock Responses API.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { callOutputs, type ResponsesReply, type ResponsesRequest } from './mock-responses';

/** Where `node scripts/setup.mjs codex` puts the binary (the repository's .cache/codex). */
export function codexBin(): string {
  return path.resolve(__dirname, '../../../../.cache/codex/node_modules/.bin/codex');
}

export interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCodex(opts: { codexHome: string; cwd: string; baseUrl: string; bin?: string; env?: NodeJS.ProcessEnv; extraArgs?: string[] }): Promise<CodexRun> {
  const args = [
    'exec', '--json', '--skip-git-repo-check',
    ...(opts.extraArgs ?? ['--dangerously-bypass-approvals-and-sandbox']),
    '-c', 'model_provider="mock"',
    '-c', `model_providers.mock={name="mock", base_url="${opts.baseUrl}", wire_api="responses", env_key="SPILLWAY_MOCK_KEY"}`,
    '-m', 'gpt-5.5', // a model Codex has metadata for: its own output limits apply
    'Build it',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(opts.bin ?? codexBin(), args, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env, CODEX_HOME: opts.codexHome, SPILLWAY_MOCK_KEY: 'test-key' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The model's side: run these commands one after the other (`exec_command`,
 * returning after `yieldMs`: long, so that a loaded machine rarely splits an output), polling a command still running with
 * `write_stdin` until it ends, then answer "done".
 */
export type ScriptedCommand = string | { cmd: string; yieldMs: number };

export function execScript(commands: ScriptedCommand[], yieldMs = 30_000): (req: ResponsesRequest) => ResponsesReply {
  return (req) => {
    const outputs = callOutputs(req);
    const last = outputs[outputs.length - 1]?.text ?? '';
    const running = /Process running with session ID (\d+)/.exec(last);
    if (running) return { kind: 'call', name: 'write_stdin', args: { session_id: Number(running[1]), chars: '', yield_time_ms: 5_000 } };
    const next = commands[startedCommands(req)];
    if (next === undefined) return { kind: 'text', text: 'done' };
    const [cmd, yieldTime] = typeof next === 'string' ? [next, yieldMs] : [next.cmd, next.yieldMs];
    return { kind: 'call', name: 'exec_command', args: { cmd, yield_time_ms: yieldTime } };
  };
}

/** How many exec_command calls the conversation holds so far. */
function startedCommands(req: ResponsesRequest): number {
  return (req.input ?? []).filter((item) => item.type === 'function_call' && item.name === 'exec_command').length;
}

/**
 * What the model got back for the command `command`: the output of its call and of each write_stdin poll that
 * followed it, joined (a command still running when Codex hands back its first output comes in pieces).
 */
export function outputFor(req: ResponsesRequest, command: string): string {
  const input = req.input ?? [];
  const at = input.findIndex((item) => item.type === 'function_call' && item.name === 'exec_command' && (JSON.parse(String(item.arguments)) as { cmd?: string }).cmd === command);
  if (at === -1) throw new Error(`the model never ran ${command.slice(0, 80)}`);
  // Its own output, then those of the write_stdin polls that followed until the next command.
  let text = '';
  const callIds = new Set<string>();
  for (let i = at; i < input.length; i++) {
    const item = input[i]!;
    if (i > at && item.type === 'function_call' && item.name === 'exec_command') break;
    if (item.type === 'function_call') callIds.add(String(item.call_id));
  }
  for (const o of callOutputs(req)) if (callIds.has(o.call_id)) text += o.text;
  return text;
}

/**
 * The command's output without Codex's headers (`Chunk ID`, `Wall time`, ... `Output:`): the body of each piece
 * (one, or one per write_stdin poll), joined.
 */
export function bodyOf(output: string): string {
  return output
    .split(/(?=^Chunk ID: )/m)
    .map((piece) => {
      const at = piece.indexOf('\nOutput:\n');
      return at === -1 ? piece : piece.slice(at + '\nOutput:\n'.length);
    })
    .join('');
}
