// A small HTTP proxy on 127.0.0.1 in front of the RGW: counts the body bytes it passes back, and can answer
// the next N requests with 503 SlowDown (as S3 does under load) without passing them on.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Proxy {
  endpoint: string;
  bytesOut: number;
  requests: number;
  /** Path of each PUT passed on (its query cut off): a simple upload or one part of a multipart one. */
  puts: string[];
  /** Requests still to answer with 503. */
  fail503: number;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<Proxy> {
  const to = new URL(target);
  const state = { bytesOut: 0, requests: 0, fail503: 0, puts: [] as string[] };
  const server = http.createServer((req, res) => {
    state.requests++;
    if (state.fail503 > 0) {
      state.fail503--;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml' }).end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
      return;
    }
    if (req.method === 'PUT') state.puts.push((req.url ?? '').split('?')[0]!);
    const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.on('data', (chunk: Buffer) => {
        state.bytesOut += chunk.length;
      });
      upRes.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: Proxy = Object.assign(state as Omit<Proxy, 'endpoint' | 'close'>, {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  }) as Proxy;
  return proxy;
}
