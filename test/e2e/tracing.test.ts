import { randomBytes } from 'node:crypto';
import { eventually } from '@svc/platform/testing';
import { tracerOf } from '@svc/platform/tracing';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { adminOf, seedTenant } from '../support/fixtures.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { type Stack, startStack } from '../support/stack.js';
import { seedTaskTenant } from '../support/tasks.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** OTLP span kinds. */
const KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** Rows of a query on the stack's database. */
async function rowsOf(stack: Stack, sql: string, params: unknown[]): Promise<any[]> {
  const db = new pg.Client({ connectionString: stack.db.url });
  await db.connect();
  try {
    return (await db.query(sql, params)).rows;
  } finally {
    await db.end();
  }
}

/** A caller's own trace: the integrator's span the whole chain hangs from. */
const callerTrace = () => {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` };
};

/**
 * Tracing (decision 0200): one trace from the integrator's request to the subscriber's POST, exported over OTLP/HTTP
 * to a collector on loopback; and nothing traced, exported or sent when OTEL_EXPORTER_OTLP_ENDPOINT is unset.
 */
describe('tracing: one trace from the integrator’s request to the subscriber’s POST', () => {
  let otlp: OtlpReceiver;
  let receiver: WebhookReceiver;
  before(async () => {
    otlp = await OtlpReceiver.start();
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
    await otlp?.close();
  });

  const subscribe = async (stack: Stack, t: any, name: string, answer: (nth: number) => number = () => 200) => {
    const admin = adminOf(client(stack.gatewayUrl).call, stack.adminToken);
    const res = await admin('POST', `/companies/${t.company.id}/webhooks`, {
      url: receiver.route(name, (_r, nth) => answer(nth)),
      events: ['lead.created'],
    });
    expect(res.status, res.text).to.equal(201);
  };

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
    let stack: Stack;
    before(async function () {
      this.timeout(90_000);
      stack = await startStack({
        all: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '50' },
        webhooks: { WEBHOOK_RETRY_BASE_MS: '50' },
      });
    });
    after(async () => {
      await stack?.stop();
    });

    /** The spans of a trace once `done` holds for them. */
    const traceOf = (traceId: string, done: (spans: ReceivedSpan[]) => boolean) =>
      eventually(() => {
        const spans = otlp.spans.filter((s) => s.traceId === traceId);
        return done(spans) ? spans : undefined;
      }, 20_000);
    const one = (spans: ReceivedSpan[], service: string, kind: number, name: string) => {
      const found = spans.filter((s) => s.service === service && s.kind === kind && s.name.startsWith(name));
      expect(found, `${service} ${name}: ${JSON.stringify(spans.map((s) => [s.service, s.name]))}`).to.have.length(1);
      return found[0]!;
    };

    it('chains gateway → crm → outbox publish → webhooks consumer → delivery attempt, and the subscriber gets the attempt’s traceparent', async () => {
      const call = client(stack.gatewayUrl).call;
      const t = await seedTenant(call, stack.adminToken);
      const name = `${t.company.id}/traced`;
      await subscribe(stack, t, name);
      const caller = callerTrace();
      const res = await call('POST', '/integrations/external/leads', {
        token: t.key.key,
        headers: { traceparent: caller.header },
        body: { title: 'Traced lead' },
      });
      expect(res.status, res.text).to.equal(201);

      const [post] = await eventually(() => (receiver.on(name).length ? receiver.on(name) : undefined), 20_000);
      const sent = TRACEPARENT.exec(String(post!.headers.traceparent));
      expect(sent, String(post!.headers.traceparent)).to.not.equal(null);
      expect(sent![1]).to.equal(caller.traceId);

      // Each process exports on its own schedule: wait for the span of every hop, the gateway's included.
      const hops: [string, number][] = [
        ['gateway', KIND.SERVER],
        ['crm', KIND.SERVER],
        ['crm', KIND.PRODUCER],
        ['webhooks', KIND.CONSUMER],
        ['webhooks', KIND.CLIENT],
      ];
      const spans = await traceOf(caller.traceId, (s) =>
        hops.every(([service, kind]) => s.some((x) => x.service === service && x.kind === kind)),
      );
      const gateway = one(spans, 'gateway', KIND.SERVER, 'gateway POST');
      const crm = one(spans, 'crm', KIND.SERVER, 'http POST');
      const publish = one(spans, 'crm', KIND.PRODUCER, 'outbox publish lead.created');
      const consume = one(spans, 'webhooks', KIND.CONSUMER, 'webhooks consume lead.created');
      const attempt = one(spans, 'webhooks', KIND.CLIENT, 'webhook POST lead.created');
      expect(gateway.parentSpanId).to.equal(caller.spanId);
      expect(gateway.attributes['url.path']).to.equal('/integrations/external/leads');
      expect(gateway.attributes['http.response.status_code']).to.equal(201);
      expect(crm.parentSpanId).to.equal(gateway.spanId);
      expect(publish.parentSpanId).to.equal(crm.spanId);
      expect(publish.attributes['messaging.message.id']).to.equal(post!.body.event_id);
      expect(consume.parentSpanId).to.equal(publish.spanId);
      expect(attempt.parentSpanId).to.equal(consume.spanId);
      expect(attempt.attributes['http.response.status_code']).to.equal(200);
      // The subscriber's POST is a child of the attempt's span.
      expect(sent![2]).to.equal(attempt.spanId);
      const rows = await rowsOf(stack, `select traceparent from crm.outbox where id = $1`, [post!.body.event_id]);
      expect(rows[0].traceparent).to.match(new RegExp(`^00-${caller.traceId}-${crm.spanId}-01$`));
      const deliveries = await rowsOf(stack, `select traceparent from webhooks.deliveries where event_id = $1`, [post!.body.event_id]);
      expect(deliveries.map((d) => d.traceparent)).to.deep.equal([`00-${caller.traceId}-${consume.spanId}-01`]);
    });

    it('makes each attempt of a retried delivery a span of its own under the consumer’s, sent to the subscriber', async () => {
      const call = client(stack.gatewayUrl).call;
      const t = await seedTenant(call, stack.adminToken);
      const name = `${t.company.id}/retried`;
      await subscribe(stack, t, name, (nth) => (nth === 1 ? 500 : 200));
      const caller = callerTrace();
      const res = await call('POST', '/integrations/external/leads', {
        token: t.key.key,
        headers: { traceparent: caller.header },
        body: { title: 'Lead of a flaky subscriber' },
      });
      expect(res.status, res.text).to.equal(201);
      const posts = await eventually(() => (receiver.on(name).length === 2 ? receiver.on(name) : undefined), 20_000);
      const sent = posts.map((p) => TRACEPARENT.exec(String(p.headers.traceparent)));
      const spans = await traceOf(caller.traceId, (s) => s.filter((x) => x.kind === KIND.CLIENT && x.service === 'webhooks').length === 2);
      const consume = one(spans, 'webhooks', KIND.CONSUMER, 'webhooks consume lead.created');
      const attempts = spans.filter((s) => s.kind === KIND.CLIENT && s.service === 'webhooks');
      for (const a of attempts) expect(a.parentSpanId).to.equal(consume.spanId);
      expect(attempts.map((a) => a.attributes['http.response.status_code']).sort()).to.deep.equal([200, 500]);
      expect(sent.map((m) => m?.[1])).to.deep.equal([caller.traceId, caller.traceId]);
      expect(sent.map((m) => m?.[2]).sort()).to.deep.equal(attempts.map((a) => a.spanId).sort());
    });

    it('starts a trace at the gateway when the caller sent none', async () => {
      const call = client(stack.gatewayUrl).call;
      const t = await seedTenant(call, stack.adminToken);
      const name = `${t.company.id}/untraced-caller`;
      await subscribe(stack, t, name);
      const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Lead of a new trace' } });
      expect(res.status, res.text).to.equal(201);
      const [post] = await eventually(() => (receiver.on(name).length ? receiver.on(name) : undefined), 20_000);
      const sent = TRACEPARENT.exec(String(post!.headers.traceparent));
      expect(sent, String(post!.headers.traceparent)).to.not.equal(null);
      const spans = await traceOf(sent![1]!, (s) => s.some((x) => x.kind === KIND.CLIENT && x.service === 'webhooks'));
      const gateway = one(spans, 'gateway', KIND.SERVER, 'gateway POST');
      expect(gateway.parentSpanId).to.equal('');
      expect(one(spans, 'crm', KIND.SERVER, 'http POST').parentSpanId).to.equal(gateway.spanId);
    });

    it('carries the trace over a gRPC hop: a task creation’s check of its lead is a crm span under tasks’ span', async () => {
      const call = client(stack.gatewayUrl).call;
      const t = await seedTaskTenant(call, stack.adminToken);
      const caller = callerTrace();
      const res = await call('POST', '/integrations/external/tasks', {
        token: t.key.key,
        headers: { traceparent: caller.header },
        body: { crm_task_type_id: t.types.call.id, title: 'Call', start_date: '2026-12-01T13:00:00.000Z', crm_lead_id: t.leads.team.id },
      });
      expect(res.status, res.text).to.equal(201);
      const spans = await traceOf(caller.traceId, (s) =>
        ['gateway', 'tasks', 'crm'].every((service) => s.some((x) => x.service === service && x.kind === KIND.SERVER)),
      );
      const gateway = one(spans, 'gateway', KIND.SERVER, 'gateway POST');
      const tasks = one(spans, 'tasks', KIND.SERVER, 'http POST');
      expect(tasks.parentSpanId).to.equal(gateway.spanId);
      const grpc = spans.filter((s) => s.service === 'crm' && s.kind === KIND.SERVER && s.name.startsWith('grpc '));
      expect(grpc.map((s) => s.attributes['rpc.method'])).to.include('/crm.v1.RecordService/GetRecordSummaries');
      for (const s of grpc) expect(s.parentSpanId).to.equal(tasks.spanId);
    });
  });

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT unset', () => {
    let stack: Stack;
    before(async function () {
      this.timeout(90_000);
      stack = await startStack();
    });
    after(async () => {
      await stack?.stop();
    });

    it('exports nothing, stores no traceparent and sends none to the subscriber, even when the caller sent one', async () => {
      const call = client(stack.gatewayUrl).call;
      const t = await seedTenant(call, stack.adminToken);
      const name = `${t.company.id}/off`;
      await subscribe(stack, t, name);
      const exported = otlp.requests;
      const res = await call('POST', '/integrations/external/leads', {
        token: t.key.key,
        headers: { traceparent: callerTrace().header },
        body: { title: 'Untraced lead' },
      });
      expect(res.status, res.text).to.equal(201);
      const [post] = await eventually(() => (receiver.on(name).length ? receiver.on(name) : undefined), 20_000);
      expect(post!.headers).to.not.have.property('traceparent');
      const rows = await rowsOf(stack, `select traceparent from crm.outbox where id = $1`, [post!.body.event_id]);
      expect(rows[0].traceparent).to.equal(null);
      const deliveries = await rowsOf(stack, `select traceparent from webhooks.deliveries where event_id = $1`, [post!.body.event_id]);
      expect(deliveries.map((d: any) => d.traceparent)).to.deep.equal([null]);
      for (const service of ['gateway', 'crm', 'tasks', 'chat', 'files', 'webhooks'])
        expect(tracerOf(service), service).to.equal(undefined);
      expect(otlp.requests).to.equal(exported);
    });
  });
});
