// A stand-in for the Gemini API on 127.0.0.1, enough for the real Gemini CLI:
// `models/<m>:streamGenerateContent?alt=sse`, `:generateContent` and
// `:countTokens`. Each generate request body is kept for assertions; a script
// decides the reply from the conversation so far.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

export type GeminiReply = { kind: 'call'; name: string; args: Record<string, unknown> } | { kind: 'text'; text: string };

export interface GeminiPart {
  text?: string;
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response?: Record<string, unknown> };
  [key: string]: unknown;
}

export interface GenerateRequest {
  contents: Array<{ role?: string; parts?: GeminiPart[] }>;
  tools?: Array<{ functionDeclarations?: Array<{ name: string }> }>;
  [key: string]: unknown;
}

export interface MockGemini {
  url: string;
  /** Every generateContent / streamGenerateContent body received, in order, with the model named in its path. */
  requests: Array<GenerateRequest & { model: string }>;
  close(): Promise<void>;
}

/** `script` may answer later (a promise): a slow API call. */
export async function startMockGemini(script: (req: GenerateRequest) => GeminiReply | Promise<GeminiReply>): Promise<MockGemini> {
  const requests: Array<GenerateRequest & { model: string }> = [];
  let counter = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      const route = /\/models\/([^/:?]+):(streamGenerateContent|generateContent|countTokens)/.exec(url);
      let body: GenerateRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as GenerateRequest;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"code":400,"message":"bad json","status":"INVALID_ARGUMENT"}}');
        return;
      }
      if (req.method !== 'POST' || !route) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":404,"message":"no such route","status":"NOT_FOUND"}}');
        return;
      }
      const [, model, method] = route;
      const promptTokens = Math.ceil(JSON.stringify(body.contents ?? []).length / 4);
      if (method === 'countTokens') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ totalTokens: promptTokens }));
        return;
      }
      requests.push({ ...body, model: model! });
      void Promise.resolve(script(body)).then((reply) => {
        counter++;
        const part: GeminiPart = reply.kind === 'call' ? { functionCall: { id: `call_mock${String(counter).padStart(4, '0')}`, name: reply.name, args: reply.args } } : { text: reply.text };
        const response = {
          candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: promptTokens, candidatesTokenCount: 20, totalTokenCount: promptTokens + 20 },
          modelVersion: model,
        };
        if (method === 'generateContent') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        res.end(`data: ${JSON.stringify(response)}\r\n\r\n`);
      });
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

/** The functionResponse parts of a request, in order, with their output text. */
export function functionResponses(req: GenerateRequest): Array<{ id?: string; name: string; text: string }> {
  const out: Array<{ id?: string; name: string; text: string }> = [];
  for (const content of req.contents ?? []) {
    for (const part of content.parts ?? []) {
      if (!part.functionResponse) continue;
      const response = part.functionResponse.response ?? {};
      const value = response.output ?? response.error ?? response;
      out.push({ id: part.functionResponse.id, name: part.functionResponse.name, text: typeof value === 'string' ? value : JSON.stringify(value) });
    }
  }
  return out;
}

/**
 * The result of the `index`-th tool call (0-based) as the model was first sent
 * it: Gemini CLI masks bulky older tool outputs in later requests, so the last
 * request is not what the model saw when the result arrived.
 */
export function firstSeenResult(requests: GenerateRequest[], index: number): string | undefined {
  for (const req of requests) {
    const responses = functionResponses(req);
    if (responses.length > index) return responses[index]!.text;
  }
  return undefined;
}

/** The functionCall parts of a request, in order. */
export function functionCalls(req: GenerateRequest): Array<{ id?: string; name: string; args: Record<string, unknown> }> {
  const out: Array<{ id?: string; name: string; args: Record<string, unknown> }> = [];
  for (const content of req.contents ?? []) {
    for (const part of content.parts ?? []) if (part.functionCall) out.push({ id: part.functionCall.id, name: part.functionCall.name, args: part.functionCall.args ?? {} });
  }
  return out;
}

/**
 * The usual script: ask for these shell commands one after the other, then
 * answer with `finalText`. Requests that offer no tools (side questions) get "ok".
 */
export function shellScript(commands: string[], finalText = 'done'): (req: GenerateRequest) => GeminiReply {
  return (req) => {
    const offered = (req.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).some((d) => d.name === 'run_shell_command');
    if (!offered) return { kind: 'text', text: 'ok' };
    const next = commands[functionResponses(req).length];
    return next === undefined ? { kind: 'text', text: finalText } : { kind: 'call', name: 'run_shell_command', args: { command: next, description: `step ${functionResponses(req).length + 1}` } };
  };
}

/** The model every run is pinned to (the default "auto" asks a router model first). */
export const GEMINI_MODEL = 'gemini-2.5-flash';

/** A home whose ~/.gemini/settings.json selects API-key auth (Gemini CLI needs it to use GOOGLE_GEMINI_BASE_URL), and a work folder. */
export function geminiDirs(tmp: string, settings: Record<string, unknown> = {}): { home: string; settingsFile: string; workDir: string } {
  const home = path.join(tmp, 'home');
  const workDir = path.join(tmp, 'work');
  fs.mkdirSync(path.join(home, '.gemini'), { recursive: true });
  fs.mkdirSync(workDir, { recursive: true });
  const settingsFile = path.join(home, '.gemini', 'settings.json');
  fs.writeFileSync(settingsFile, JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, ...settings }, null, 2) + '\n');
  return { home, settingsFile, workDir };
}

/** Environment that keeps the real Gemini CLI offline, on the mock, in a temp home. */
export function offlineGeminiEnv(opts: { home: string; baseUrl: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Nothing of the outer test run's Gemini or Google settings may leak in.
  for (const [key, value] of Object.entries(process.env)) if (!/^(GEMINI|GOOGLE)_/.test(key)) env[key] = value;
  return {
    ...env,
    HOME: opts.home,
    GEMINI_API_KEY: 'test-key',
    GOOGLE_GEMINI_BASE_URL: opts.baseUrl,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    GEMINI_CLI_NO_RELAUNCH: '1',
    NO_COLOR: '1',
  };
}

/** Runs `gemini -p <prompt>` headless (stream-json, yolo unless `approval` says otherwise); resolves when it exits. */
export function runGemini(opts: { script: string; prompt: string; cwd: string; env: NodeJS.ProcessEnv; approval?: string; node?: string }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const args = [opts.script, '-p', opts.prompt, '-m', GEMINI_MODEL, '--output-format', 'stream-json', '--approval-mode', opts.approval ?? 'yolo'];
    const child = spawn(opts.node ?? process.execPath, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
