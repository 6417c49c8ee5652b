// A stand-in for the Anthropic Messages API on 127.0.0.1, enough for the real
// Claude Code CLI: streaming (SSE) and plain `POST /v1/messages`, plus
// `POST /v1/messages/count_tokens`. Each request body is kept for assertions;
// a script decides the reply from the conversation so far.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

export type MockReply = { kind: 'tool_use'; name: string; input: Record<string, unknown> } | { kind: 'text'; text: string };

export interface MessagesRequest {
  model?: string;
  stream?: boolean;
  tools?: Array<{ name?: string }>;
  messages: Array<{ role: string; content: unknown }>;
  [key: string]: unknown;
}

export interface MockAnthropic {
  url: string;
  /** Every /v1/messages body received, in order. */
  requests: MessagesRequest[];
  close(): Promise<void>;
}

/** `script` may answer later (a promise): the request waits for it, as it would for a model still thinking. */
export async function startMockAnthropic(script: (req: MessagesRequest) => MockReply | Promise<MockReply>): Promise<MockAnthropic> {
  const requests: MessagesRequest[] = [];
  let counter = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = req.url ?? '';
      let body: MessagesRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MessagesRequest;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}');
        return;
      }
      if (req.method === 'POST' && url.startsWith('/v1/messages/count_tokens')) {
        const chars = JSON.stringify(body.messages ?? []).length;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: Math.ceil(chars / 4) }));
        return;
      }
      if (req.method !== 'POST' || !url.startsWith('/v1/messages')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"type":"error","error":{"type":"not_found_error","message":"no such route"}}');
        return;
      }
      requests.push(body);
      const reply = await script(body);
      const id = `msg_mock${++counter}`;
      const inputTokens = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
      const block =
        reply.kind === 'tool_use'
          ? { type: 'tool_use', id: `toolu_mock${String(counter).padStart(4, '0')}`, name: reply.name, input: reply.input }
          : { type: 'text', text: reply.text };
      const stopReason = reply.kind === 'tool_use' ? 'tool_use' : 'end_turn';
      const model = body.model ?? 'claude-mock';
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id, type: 'message', role: 'assistant', model, content: [block], stop_reason: stopReason, stop_sequence: null,
            usage: { input_tokens: inputTokens, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      send('message_start', {
        type: 'message_start',
        message: {
          id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
          usage: { input_tokens: inputTokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      });
      if (block.type === 'tool_use') {
        send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
        send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
      } else {
        send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
        send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } });
      }
      send('content_block_stop', { type: 'content_block_stop', index: 0 });
      send('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } });
      send('message_stop', { type: 'message_stop' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** tool_result blocks of a request's messages, in order, with their text. */
export function toolResults(req: MessagesRequest): Array<{ tool_use_id: string; text: string }> {
  const out: Array<{ tool_use_id: string; text: string }> = [];
  for (const m of req.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Array<Record<string, unknown>>) {
      if (b.type !== 'tool_result') continue;
      const c = b.content;
      const text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((x: { text?: string }) => x.text ?? '').join('') : '';
      out.push({ tool_use_id: String(b.tool_use_id), text });
    }
  }
  return out;
}

/** The real `claude` binary shipped in the SDK's platform package (a dev dependency). */
export const CLAUDE_BIN_RELATIVE = ['node_modules', '@anthropic-ai', 'claude-agent-sdk-linux-x64', 'claude'];

/** Environment that keeps the real Claude Code CLI offline, on the mock, in temp folders. */
export function offlineClaudeEnv(opts: { home: string; configDir: string; baseUrl: string }): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: opts.home,
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ANTHROPIC_API_KEY: 'test-key',
    CLAUDE_CONFIG_DIR: opts.configDir,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // Claude Code refuses bypassPermissions as root unless it is told it runs in a sandbox.
    IS_SANDBOX: '1',
  };
}

/**
 * Runs `claude -p <prompt>` (stream-json) offline against the mock; resolves when it exits. `permissions`: the
 * arguments that set them (default `--permission-mode bypassPermissions`).
 */
export function runClaude(opts: { bin: string; prompt: string; cwd: string; env: NodeJS.ProcessEnv; permissions?: string[] }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(opts.bin, ['-p', opts.prompt, '--output-format', 'stream-json', '--verbose', ...(opts.permissions ?? ['--permission-mode', 'bypassPermissions'])], {
      cwd: opts.cwd,
      env: opts.env,
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
 * The usual script: ask for these Bash commands one after the other, then
 * answer with `finalText`. Side requests without tools (titles) get "ok".
 */
export function bashScript(commands: string[], finalText = 'done'): (req: MessagesRequest) => MockReply {
  return (req) => {
    if (!(req.tools ?? []).some((t) => t.name === 'Bash')) return { kind: 'text', text: 'ok' };
    const next = commands[toolResults(req).length];
    return next === undefined ? { kind: 'text', text: finalText } : { kind: 'tool_use', name: 'Bash', input: { command: next } };
  };
}

/** A Claude config dir and a work dir inside `tmp`. */
export function claudeDirs(tmp: string): { configDir: string; workDir: string } {
  const configDir = path.join(tmp, 'claude');
  const workDir = path.join(tmp, 'work');
  fs.mkdirSync(configDir, { recursive: true });
  fs.mkdirSync(workDir, { recursive: true });
  return { configDir, workDir };
}
