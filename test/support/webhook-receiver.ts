import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkDelivery } from './contract.js';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The exact body bytes. */
  raw: Buffer;
  body: any;
}

/** The status to answer; `nth` counts this event's requests on this path, from 1. */
export type Answer = (req: Received, nth: number) => number;

/** A webhook receiver on loopback with one behaviour per path (`<url>/<name>`); every request is recorded. */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly routes = new Map<string, Answer>();
  private server!: http.Server;
  url = '';

  static async start(): Promise<WebhookReceiver> {
    const r = new WebhookReceiver();
    r.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const got: Received = { path: req.url ?? '', headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')) };
        checkDelivery(got.body);
        r.received.push(got);
        const nth = r.received.filter((x) => x.path === got.path && x.body.event_id === got.body.event_id).length;
        const answer = r.routes.get(got.path) ?? (() => 200);
        res.writeHead(answer(got, nth)).end();
      });
    });
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}`;
    return r;
  }

  /** The URL of a path answering with `answer`. */
  route(name: string, answer: Answer): string {
    this.routes.set(`/${name}`, answer);
    return `${this.url}/${name}`;
  }

  on(name: string): Received[] {
    return this.received.filter((r) => r.path === `/${name}`);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
