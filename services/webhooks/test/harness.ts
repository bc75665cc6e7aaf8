import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { crmService } from '@svc/crm';
import { inTransaction, nativePool } from '@svc/platform/db/native';
import type { EventKey } from '@svc/platform/events/catalog';
import type { EventToRecord } from '@svc/platform/events/payloads';
import { IdentitySigner } from '@svc/platform/identity';
import { type RunningService, startService } from '@svc/platform/service';
import type { TestDatabase } from '@svc/platform/testing';
import { serviceTestEnv } from '@svc/platform/testing-suite';
import { webhooksService } from '../src/service.js';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
}

type Answer = (req: Received) => number | Promise<number>;

/** A webhook receiver on loopback: records every request, answers with the status `answer` gives. */
export class Receiver {
  readonly received: Received[] = [];
  inFlight = 0;
  maxInFlight = 0;
  answered = 0;
  private server!: http.Server;
  url = '';

  private constructor(public answer: Answer) {}

  static async start(answer: Answer = () => 200, host = '127.0.0.1'): Promise<Receiver> {
    const r = new Receiver(answer);
    r.server = http.createServer((req, res) => {
      r.inFlight++;
      r.maxInFlight = Math.max(r.maxInFlight, r.inFlight);
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        const raw = Buffer.concat(chunks);
        const got: Received = { path: req.url ?? '', headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')) };
        r.received.push(got);
        const status = await r.answer(got);
        r.inFlight--;
        r.answered++;
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => r.server.listen(0, host, resolve));
    r.url = `http://${host}:${(r.server.address() as AddressInfo).port}/hook`;
    return r;
  }

  eventIds(): string[] {
    return this.received.map((r) => r.body.event_id);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export interface Harness {
  crm: RunningService;
  db: TestDatabase;
  /** A webhooks instance (a replica) on the shared database and stream, with this extra environment. */
  webhooks(extra: Record<string, string>): Promise<RunningService>;
  /** A call to a service's /admin/v1 with a valid admin identity. */
  admin(service: RunningService, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  company(): Promise<string>;
  /** Issues events through a service's outbox, as crm does: relay, JetStream, the webhooks consumer. Returns their ids. */
  /** Records events with any payload under a catalog key: these tests are about delivery, not payload shapes. */
  publish(service: RunningService, companyId: string, events: { key: EventKey; payload: Record<string, unknown> }[]): Promise<string[]>;
  stop(): Promise<void>;
}

/** A real crm (companies come from it over gRPC) beside webhooks instances, on a fresh database and stream. */
export async function startHarness(): Promise<Harness> {
  const { env, db } = await serviceTestEnv();
  const crm = await startService(crmService, env);
  const started: RunningService[] = [];
  const token = await new IdentitySigner(env.IDENTITY_TOKEN_SECRET!).sign({ kind: 'admin' });
  const admin: Harness['admin'] = async (service, method, path, body) => {
    const res = await fetch(`${service.httpUrl}/admin/v1${path}`, {
      method,
      headers: { 'x-svc-identity': token, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  let companies = 0;
  return {
    crm,
    db,
    admin,
    webhooks: async (extra) => {
      const s = await startService(webhooksService, { ...env, CRM_GRPC_URL: crm.grpcAddress, ...extra });
      started.push(s);
      return s;
    },
    company: async () => {
      const n = ++companies;
      const res = await admin(crm, 'POST', '/companies', { name: `Co ${n}`, master_user: { name: 'M', email: `m${n}@co.test` } });
      if (res.status !== 201) throw new Error(`company: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },
    publish: async (service, companyId, events) =>
      inTransaction(await nativePool(service.ctx.orm), (tx) =>
        service.ctx.outbox.write(
          tx,
          events.map((e) => ({ companyId, eventKey: e.key, payload: e.payload }) as EventToRecord),
        ),
      ),
    stop: async () => {
      await Promise.all(started.map((s) => s.stop()));
      await crm.ctx.nats.jsm.streams.delete(env.NATS_STREAM!).catch(() => undefined);
      await crm.stop();
      await db.drop();
    },
  };
}
