import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectNats } from '@svc/platform/events/nats';
import { createLogger } from '@svc/platform/logging';
import { expect } from 'chai';
import pg from 'pg';
import type { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import type { Stack } from '../support/stack.js';

type Call = ReturnType<typeof client>['call'];

/**
 * A loopback webhook receiver of lead.created that remembers, for every delivery it confirmed (2xx),
 * the event id and the lead, and notes anything wrong: a bad signature, header and body ids that
 * differ, one event id for two leads, two event ids for one lead.
 */
export interface LeadReceiver {
  url: string;
  /** Requests received (confirmed or not). */
  requests(): number;
  /** event id → lead id, of confirmed deliveries. */
  events: Map<string, string>;
  /** event id → how many times a delivery of it was confirmed. */
  confirmations: Map<string, number>;
  /** lead id → the event ids it came with. */
  byLead: Map<string, Set<string>>;
  problems: string[];
  /** The subscription's secret, once it is known, to check signatures. */
  secret: string;
  close(): Promise<void>;
}

export async function startLeadReceiver(fail: (request: number) => boolean = () => false): Promise<LeadReceiver> {
  let requests = 0;
  const r: LeadReceiver = {
    url: '',
    requests: () => requests,
    events: new Map(),
    confirmations: new Map(),
    byLead: new Map(),
    problems: [],
    secret: '',
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
  const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const n = ++requests;
      const raw = Buffer.concat(chunks);
      let body: { event_id: string; event_key: string; payload: { lead: { id: string } } };
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        r.problems.push(`unparsable body ${raw.toString('utf8').slice(0, 100)}`);
        res.writeHead(400).end();
        return;
      }
      if (r.secret) {
        const signature = `sha256=${createHmac('sha256', r.secret).update(raw).digest('hex')}`;
        if (
          !String(req.headers['x-svc-signature'] ?? '')
            .split(',')
            .includes(signature)
        )
          r.problems.push(`bad signature ${body.event_id}`);
      }
      if (req.headers['x-svc-event-id'] !== body.event_id) r.problems.push(`header and body ids differ ${body.event_id}`);
      if (fail(n)) {
        res.writeHead(503).end();
        return;
      }
      const leadId = body.payload?.lead?.id;
      const known = r.events.get(body.event_id);
      if (known && known !== leadId) r.problems.push(`event id ${body.event_id} reused for lead ${leadId} (was ${known})`);
      r.events.set(body.event_id, leadId);
      r.confirmations.set(body.event_id, (r.confirmations.get(body.event_id) ?? 0) + 1);
      const ids = r.byLead.get(leadId) ?? new Set<string>();
      ids.add(body.event_id);
      if (ids.size > 1) r.problems.push(`lead ${leadId} came with two event ids: ${[...ids].join(', ')}`);
      r.byLead.set(leadId, ids);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return r;
}

/** A lead receiver subscribed to lead.created for company `companyId` through the admin API, checking signatures. */
export async function subscribedLeadReceiver(call: Call, adminToken: string, companyId: string, fail?: (request: number) => boolean) {
  const receiver = await startLeadReceiver(fail);
  const sub = await adminOf(call, adminToken)('POST', `/companies/${companyId}/webhooks`, { url: receiver.url, events: ['lead.created'] });
  expect(sub.status, sub.text).to.equal(201);
  receiver.secret = sub.body.secret;
  return receiver;
}

/** A tenant with a limit no burst reaches, and a receiver subscribed to its lead.created. */
export async function burstTenant(call: Call, adminToken: string): Promise<{ t: Tenant; receiver: LeadReceiver }> {
  const t = await seedTenant(call, adminToken, { rate_limit_per_minute: 1_000_000 });
  return { t, receiver: await subscribedLeadReceiver(call, adminToken, t.company.id) };
}

export interface Burst {
  /** Lead ids answered 201. */
  created: string[];
  /** Other answers (status or network error) and how many of each. */
  failures: Map<string, number>;
  /** Resolves when every worker has stopped. */
  done: Promise<void>;
  /** Asks the workers to stop after their current request. */
  stop(): void;
}

/**
 * Creates leads through the gateway with `concurrency` workers, until `total` answered 201 or stop()
 * is called. Failed requests are counted, not retried (a lead that did not answer 201 is not expected).
 */
export function leadBurst(call: Call, key: string, o: { total: number; concurrency: number; label?: string }): Burst {
  const created: string[] = [];
  const failures = new Map<string, number>();
  let started = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped && started < o.total) {
      const n = started++;
      try {
        const res = await call('POST', '/integrations/external/leads', { token: key, body: { title: `${o.label ?? 'Burst'} ${n}` } });
        if (res.status === 201) created.push(res.body.id);
        else {
          failures.set(String(res.status), (failures.get(String(res.status)) ?? 0) + 1);
          started--; // not created: another attempt takes its place
          await new Promise((r) => setTimeout(r, 50));
        }
      } catch (err) {
        const name = (err as Error).message;
        failures.set(name, (failures.get(name) ?? 0) + 1);
        started--;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const done = Promise.all(Array.from({ length: o.concurrency }, worker)).then(() => undefined);
  return {
    created,
    failures,
    done,
    stop: () => {
      stopped = true;
    },
  };
}

/** What is still on its way in a stack: unpublished outbox rows, unconsumed events, unfinished deliveries. */
export async function backlog(stack: Stack, natsUrl: string) {
  const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
  await db.connect();
  try {
    const count = async (sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0]!.n);
    const nats = await connectNats(natsUrl, 'fault-backlog', createLogger('test', 'silent'));
    try {
      const consumer = await nats.jsm.consumers.info(stack.env.NATS_STREAM!, 'webhooks');
      return {
        unpublished: await count('select count(*) as n from crm.outbox where published_at is null'),
        unconsumed: consumer.num_pending + consumer.num_ack_pending,
        pendingDeliveries: await count(`select count(*) as n from webhooks.deliveries where status = 'pending'`),
        deliveries: await count('select count(*) as n from webhooks.deliveries'),
        streamMessages: (await nats.jsm.streams.info(stack.env.NATS_STREAM!)).state.messages,
      };
    } finally {
      await nats.nc.close();
    }
  } finally {
    await db.end();
  }
}

export const quiet = (b: Awaited<ReturnType<typeof backlog>>) => b.unpublished === 0 && b.unconsumed === 0 && b.pendingDeliveries === 0;

/** A one-line summary of failures for the test log. */
export const summary = (m: Map<string, number>) => [...m].map(([k, v]) => `${k}×${v}`).join(', ') || 'none';
