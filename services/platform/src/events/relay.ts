import type { MikroORM } from '@mikro-orm/postgresql';
import type { JetStreamClient } from '@nats-io/jetstream';
import pg from 'pg';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { type EventMessage, outboxChannel } from './outbox.js';

export interface RelayOptions {
  orm: MikroORM;
  js: JetStreamClient;
  databaseUrl: string;
  schema: string;
  subjectPrefix: string;
  logger: Logger;
  metrics: Metrics;
  batchSize?: number;
  /** Longest wait between sweeps when no notification arrives (a lost NOTIFY or a relay restart). */
  idleSweepMs?: number;
}

interface OutboxRow {
  id: string;
  company_id: string;
  event_key: string;
  payload: Record<string, unknown>;
  occurred_at: Date;
}

/**
 * Publishes outbox rows to JetStream with Nats-Msg-Id = event id, then marks them published. Woken by
 * NOTIFY on commit, with a periodic sweep as the safety net. Rows are claimed with SKIP LOCKED, so
 * several replicas share the work; a crash between publish and mark republishes the same ids, which
 * JetStream's duplicate window drops.
 */
export class OutboxRelay {
  private running = false;
  private wake: (() => void) | undefined;
  private listener: pg.Client | undefined;
  private loop: Promise<void> | undefined;
  publishedTotal = 0;

  constructor(private readonly o: RelayOptions) {}

  async start(): Promise<void> {
    this.running = true;
    await this.listen();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await this.listener?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.databaseUrl });
    client.on('notification', () => this.wake?.());
    client.on('error', (err) => {
      this.o.logger.warn({ err: err.message }, 'outbox listener lost its connection; relying on sweeps until it is back');
      this.listener = undefined;
      setTimeout(() => this.running && this.listen().catch(() => undefined), 1000);
    });
    try {
      await client.connect();
      await client.query(`listen "${outboxChannel(this.o.schema)}"`);
      this.listener = client;
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).message }, 'outbox listener could not connect; retrying');
      await client.end().catch(() => undefined);
      setTimeout(() => this.running && this.listen().catch(() => undefined), 1000);
    }
  }

  private async run(): Promise<void> {
    const idle = this.o.idleSweepMs ?? 1000;
    let backoff = 100;
    while (this.running) {
      try {
        const n = await this.drainOnce();
        backoff = 100;
        if (n > 0) continue;
      } catch (err) {
        this.o.logger.warn({ err: (err as Error).message }, 'outbox relay failed a batch; retrying');
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, idle);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Publishes one batch; returns how many rows it published. */
  async drainOnce(): Promise<number> {
    const em = this.o.orm.em.fork();
    return em.transactional(async (tx) => {
      const rows = await tx.execute<OutboxRow[]>(
        `select id, company_id, event_key, payload, occurred_at from "${this.o.schema}".outbox
          where published_at is null order by id limit ? for update skip locked`,
        [this.o.batchSize ?? 500],
      );
      if (!rows.length) return 0;
      await Promise.all(
        rows.map((row) => {
          const message: EventMessage = {
            event_id: row.id,
            event_key: row.event_key,
            company_id: row.company_id,
            occurred_at: new Date(row.occurred_at).toISOString(),
            payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
          };
          return this.o.js.publish(`${this.o.subjectPrefix}.${row.event_key}`, JSON.stringify(message), {
            msgID: row.id,
            timeout: 5000,
          });
        }),
      );
      await tx.execute(`update "${this.o.schema}".outbox set published_at = now() where id in (?)`, [rows.map((r) => r.id)]);
      this.publishedTotal += rows.length;
      this.o.metrics.outboxPublished.inc(rows.length);
      return rows.length;
    });
  }

  async status(): Promise<{ pending: number; oldestPendingAgeMs: number }> {
    const [row] = await this.o.orm.em
      .fork()
      .execute<{ pending: string; oldest: Date | null }[]>(
        `select count(*) as pending, min(occurred_at) as oldest from "${this.o.schema}".outbox where published_at is null`,
      );
    const pending = Number(row?.pending ?? 0);
    this.o.metrics.outboxPending.set(pending);
    return { pending, oldestPendingAgeMs: row?.oldest ? Date.now() - new Date(row.oldest).getTime() : 0 };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
