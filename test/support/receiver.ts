import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkDelivery } from './contract.js';

export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The exact body bytes. */
  raw: Buffer;
  body: any;
}

/** A status, or a status and the body to answer with. */
export type ReceiverAnswer = number | { status: number; body: string };

/**
 * A webhook receiver on loopback that records every request and answers with the status (and body) `answer` gives.
 * `url(path)` is the address of a path on it.
 */
export async function startReceiver(answer: (r: ReceivedRequest) => ReceiverAnswer | Promise<ReceiverAnswer> = () => 200) {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      let body: any;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      const r: ReceivedRequest = { path: req.url ?? '', headers: req.headers, raw, body };
      checkDelivery(body);
      received.push(r);
      const a = await answer(r);
      if (typeof a === 'number') res.writeHead(a).end();
      else res.writeHead(a.status, { 'content-type': 'text/plain; charset=utf-8' }).end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    received,
    url: (path = '/') => `${base}${path.startsWith('/') ? path : `/${path}`}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
