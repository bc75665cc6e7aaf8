import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP export carries it, with the `service.name` of its resource. */
export interface ReceivedSpan {
  service: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

/** OTLP/JSON writes ids as hex; a collector may send base64 (protobuf JSON mapping): both read as hex. */
const hexOf = (id: unknown): string => {
  if (typeof id !== 'string' || id === '') return '';
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
};

const attributeValue = (v: Record<string, unknown> | undefined): unknown =>
  v === undefined ? undefined : (v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue);

/** A collector on loopback that takes OTLP/HTTP JSON exports (`POST /v1/traces`) and keeps their spans. */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Export requests received, of any content. */
  requests = 0;
  private server!: http.Server;
  url = '';

  static async start(): Promise<OtlpReceiver> {
    const r = new OtlpReceiver();
    r.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        r.requests++;
        if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
          res.writeHead(415).end();
          return;
        }
        r.take(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}`;
    return r;
  }

  private take(body: any): void {
    for (const rs of body.resourceSpans ?? []) {
      const service = attributeValue(rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value) as string;
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          this.spans.push({
            service,
            name: s.name,
            kind: s.kind,
            traceId: hexOf(s.traceId),
            spanId: hexOf(s.spanId),
            parentSpanId: hexOf(s.parentSpanId),
            attributes: Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, attributeValue(a.value)])),
          });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
