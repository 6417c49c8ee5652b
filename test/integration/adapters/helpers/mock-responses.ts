// A stand-in for the OpenAI Responses API on 127.0.0.1, enough for the real
// Codex CLI (`wire_api = "responses"`, streamed as SSE): each request body is
// kept for assertions, and a script decides the reply (a function call or a
// message) from the request.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ResponsesReply = { kind: 'call'; name: string; args: Record<string, unknown> } | { kind: 'text'; text: string };

export interface ResponsesRequest {
  model?: string;
  input?: Array<Record<string, unknown>>;
  tools?: Array<{ name?: string; type?: string }>;
  [key: string]: unknown;
}

export interface MockResponses {
  /** The base URL to give Codex (ends in /v1). */
  url: string;
  /** Every POST /v1/responses body received, in order. */
  requests: ResponsesRequest[];
  close(): Promise<void>;
}

/** `script` may answer later (a promise): the request waits for it, as it would for a model still thinking. */
export async function startMockResponses(script: (req: ResponsesRequest) => ResponsesReply | Promise<ResponsesReply>): Promise<MockResponses> {
  const requests: ResponsesRequest[] = [];
  let counter = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (req.method !== 'POST' || !(req.url ?? '').startsWith('/v1/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such route"}}');
        return;
      }
      let body: ResponsesRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ResponsesRequest;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
        return;
      }
      requests.push(body);
      const reply = await script(body);
      const n = ++counter;
      const id = `resp_mock${n}`;
      const item =
        reply.kind === 'call'
          ? { type: 'function_call', id: `fc_mock${n}`, call_id: `call_mock${String(n).padStart(4, '0')}`, name: reply.name, arguments: JSON.stringify(reply.args), status: 'completed' }
          : { type: 'message', id: `msg_mock${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
      const inputTokens = Math.ceil(JSON.stringify(body.input ?? []).length / 4);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const send = (data: Record<string, unknown>) => res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
      send({ type: 'response.created', response: { id, object: 'response', status: 'in_progress', output: [] } });
      send({ type: 'response.output_item.added', output_index: 0, item });
      send({ type: 'response.output_item.done', output_index: 0, item });
      send({
        type: 'response.completed',
        response: {
          id, object: 'response', status: 'completed', output: [item],
          usage: { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + 20 },
        },
      });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The text of each function call's output in a request's input, in order, with its call id. */
export function callOutputs(req: ResponsesRequest): Array<{ call_id: string; text: string }> {
  const out: Array<{ call_id: string; text: string }> = [];
  for (const item of req.input ?? []) {
    if (item.type !== 'function_call_output' && item.type !== 'custom_tool_call_output') continue;
    const o = item.output;
    const text =
      typeof o === 'string'
        ? o
        : Array.isArray(o)
          ? o.map((x: { text?: string }) => x.text ?? '').join('')
          : typeof (o as { content?: unknown })?.content === 'string'
            ? String((o as { content: string }).content)
            : JSON.stringify(o);
    out.push({ call_id: String(item.call_id), text });
  }
  return out;
}
