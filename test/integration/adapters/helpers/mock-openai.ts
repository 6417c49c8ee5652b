// A stand-in for an OpenAI-compatible chat-completions API on 127.0.0.1, enough
// for opencode's `@ai-sdk/openai-compatible` provider: `POST .../chat/completions`,
// streamed (SSE) or not. Each request body is kept for assertions; a script
// decides the reply from the conversation so far.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Token counts the reply reports (default: a quarter of the messages' JSON, 10 out, nothing cached). */
export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

export type OpenAIReply = ({ kind: 'tool_call'; name: string; args: Record<string, unknown> } | { kind: 'text'; text: string }) & { usage?: OpenAIUsage };

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

export interface ChatRequest {
  model?: string;
  stream?: boolean;
  messages: ChatMessage[];
  [key: string]: unknown;
}

export interface MockOpenAI {
  /** The base URL a provider's `options.baseURL` takes (ends in /v1). */
  baseURL: string;
  /** Every chat-completions body received, in order. */
  requests: ChatRequest[];
  close(): Promise<void>;
}

/** The text of a tool message's content (a string or parts). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'object' && p && 'text' in p ? String((p as { text: unknown }).text) : '')).join('');
  return '';
}

/** The tool results the model was sent in `req`, by call id. */
export function toolResults(req: ChatRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of req.messages) if (m.role === 'tool' && m.tool_call_id) out.set(m.tool_call_id, contentText(m.content));
  return out;
}

/** `script` may answer later (a promise): a slow API call. */
export async function startMockOpenAI(script: (req: ChatRequest) => OpenAIReply | Promise<OpenAIReply>): Promise<MockOpenAI> {
  const requests: ChatRequest[] = [];
  let counter = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !(req.url ?? '').endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such route"}}');
        return;
      }
      let body: ChatRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
        return;
      }
      requests.push(body);
      void Promise.resolve(script(body)).then((reply) => {
        const n = ++counter;
        const id = `chatcmpl-mock${n}`;
        const created = Math.floor(Date.now() / 1000);
        const model = body.model ?? 'mock';
        const usage = reply.usage
          ? { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens }
          : { prompt_tokens: Math.ceil(JSON.stringify(body.messages).length / 4), completion_tokens: 10, total_tokens: 0 };
        const toolCall = reply.kind === 'tool_call' ? { id: `call_mock${String(n).padStart(4, '0')}`, type: 'function', function: { name: reply.name, arguments: JSON.stringify(reply.args) } } : undefined;
        const finish = toolCall ? 'tool_calls' : 'stop';
        if (!body.stream) {
          const message = toolCall ? { role: 'assistant', content: null, tool_calls: [toolCall] } : { role: 'assistant', content: reply.kind === 'text' ? reply.text : '' };
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const send = (delta: unknown, finishReason: string | null, extra: Record<string, unknown> = {}) =>
          res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`);
        if (toolCall) send({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...toolCall }] }, null);
        else send({ role: 'assistant', content: reply.kind === 'text' ? reply.text : '' }, null);
        send({}, finish, { usage });
        res.end('data: [DONE]\n\n');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
