import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { expect } from 'chai';
import { contextOf, currentTraceparent, servedInSpan, startTracing, type Tracing, tracerOf } from '../src/tracing.js';

interface Exported {
  service: string;
  name: string;
  traceId: string;
  parentSpanId: string;
  path: unknown;
}

/** An OTLP/HTTP JSON collector on loopback. */
async function collector() {
  const spans: Exported[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        const service = rs.resource.attributes.find((a: any) => a.key === 'service.name').value.stringValue;
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({
              service,
              name: s.name,
              traceId: s.traceId,
              parentSpanId: s.parentSpanId ?? '',
              path: s.attributes.find((a: any) => a.key === 'url.path')?.value.stringValue,
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { spans, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

describe('tracing (decision 0200)', () => {
  it('is off without an endpoint: no tracer, no traceparent', () => {
    expect(startTracing('off-service', { endpoint: undefined })).to.equal(undefined);
    expect(tracerOf('off-service')).to.equal(undefined);
    expect(currentTraceparent()).to.equal(undefined);
  });

  it('reads a well-formed traceparent as the parent, and starts a new trace for a malformed one', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(trace.getSpanContext(contextOf(tp))).to.include({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' });
    for (const bad of ['00-zz-b7ad6b7169203331-01', '00-00000000000000000000000000000000-b7ad6b7169203331-01', '', undefined])
      expect(trace.getSpanContext(contextOf(bad)), String(bad)).to.equal(undefined);
  });

  describe('a service’s HTTP server span', () => {
    let otlp: Awaited<ReturnType<typeof collector>>;
    let tracing: Tracing;
    let server: http.Server;
    let url: string;
    const seen: (string | undefined)[] = [];
    before(async () => {
      otlp = await collector();
      tracing = startTracing('traced-service', { endpoint: otlp.url, delayMs: 60_000 })!;
      server = http.createServer(
        servedInSpan(tracing.tracer, (_req, res) => {
          // What the next hop would be given (gRPC metadata, an outbox row) while this request is served.
          setImmediate(() => {
            seen.push(currentTraceparent());
            res.end('ok');
          });
        }),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => {
      server.close();
      otlp.close();
    });

    it('continues the caller’s trace, gives its own span to the next hop, and leaves probes untraced', async () => {
      const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await fetch(`${url}/leads?x=1`, { method: 'POST', headers: { traceparent: caller } });
      await fetch(`${url}/healthz`, { headers: { traceparent: caller } });
      await fetch(`${url}/readyz`);
      // Stopping sends what the batch holds.
      await tracing.stop();
      expect(otlp.spans).to.have.length(1);
      const [span] = otlp.spans;
      expect(span).to.include({
        service: 'traced-service',
        name: 'http POST',
        traceId: '0af7651916cd43dd8448eb211c80319c',
        parentSpanId: 'b7ad6b7169203331',
        path: '/leads',
      });
      expect(seen[0]).to.match(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
      expect(seen[0]).to.not.contain('b7ad6b7169203331');
      expect(seen.slice(1)).to.deep.equal([undefined, undefined]);
      expect(tracerOf('traced-service')).to.equal(undefined);
    });
  });
});
