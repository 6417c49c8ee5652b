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
  /** Called with each request before it is passed on (method, path, query). */
  onRequest?: (method: string, path: string, query: string) => void;
  /** While true, every connection is dropped, as by a server that is down. */
  down: boolean;
  /** Drops the connections open now (a server stopped mid-request). */
  cutNow(): void;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<Proxy> {
  const to = new URL(target);
  const state: Pick<Proxy, 'bytesOut' | 'requests' | 'fail503' | 'puts' | 'down' | 'onRequest'> = { bytesOut: 0, requests: 0, fail503: 0, puts: [], down: false };
  const server = http.createServer((req, res) => {
    state.requests++;
    const [reqPath = '', query = ''] = (req.url ?? '').split('?');
    state.onRequest?.(req.method ?? '', reqPath, query);
    if (state.down) {
      req.socket.destroy();
      return;
    }
    if (state.fail503 > 0) {
      state.fail503--;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml' }).end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
      return;
    }
    if (req.method === 'PUT') state.puts.push(reqPath);
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
  const proxy: Proxy = Object.assign(state, {
    cutNow: () => server.closeAllConnections(),
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  }) as Proxy;
  return proxy;
}
