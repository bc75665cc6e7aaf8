import type { Metrics } from '@svc/platform/metrics';
import { Counter, Gauge, Histogram } from 'prom-client';

export interface DeliveryMetrics {
  /** `issued` (leased as inserted) or `claimed`. */
  attemptsStarted: Counter<'source'>;
  /** By kind (`issue`, `claim`, `record`), counting the deliveries they carried. */
  statements: Counter<'kind'>;
  statementRows: Counter<'kind'>;
  outcomes: Counter<'result' | 'status_class'>;
  /** From the outbox row's commit to the receiver's 2xx. */
  latency: Histogram;
  /** Another replica took the lease (this one stalled past it). */
  leasesLost: Counter;
}

export interface DeliveryCounts {
  retryPending: number;
  subscriptionsFailing: number;
  subscriptionsDisabled: number;
}

/** `none` when no answer came. */
export const statusClass = (statusCode: number | null | undefined): string =>
  statusCode && statusCode >= 100 && statusCode < 600 ? `${Math.floor(statusCode / 100)}xx` : 'none';

/** Event ids are UUID v7 written in the business change's transaction, so their time is the commit's. */
export function eventIdTime(eventId: string): number | undefined {
  if (eventId.length !== 36 || eventId[14] !== '7') return undefined;
  const ms = Number.parseInt(eventId.slice(0, 8) + eventId.slice(9, 13), 16);
  return Number.isFinite(ms) ? ms : undefined;
}

export function deliveryMetrics(metrics: Metrics): DeliveryMetrics {
  const registers = [metrics.registry];
  return {
    attemptsStarted: new Counter({
      name: 'webhook_attempts_started_total',
      help: 'Delivery attempts started, by where the delivery came from (issued: leased as inserted; claimed)',
      labelNames: ['source'],
      registers,
    }),
    statements: new Counter({
      name: 'webhook_delivery_statements_total',
      help: 'Delivery statements run (issue, claim, record, renew)',
      labelNames: ['kind'],
      registers,
    }),
    statementRows: new Counter({
      name: 'webhook_delivery_statement_rows_total',
      help: 'Deliveries carried by the delivery statements (issue, claim, record, renew)',
      labelNames: ['kind'],
      registers,
    }),
    outcomes: new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Delivery attempts recorded, by result (succeeded, retrying, failed: given up) and status class (2xx..5xx, none)',
      labelNames: ['result', 'status_class'],
      registers,
    }),
    latency: new Histogram({
      name: 'webhook_delivery_commit_to_success_seconds',
      help: "From the commit of the event to the receiver's 2xx, retries included",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
      registers,
    }),
    leasesLost: new Counter({
      name: 'webhook_leases_lost_total',
      help: 'Deliveries whose lease ran out in this process and may be with another replica: not sent, or their attempt not recorded, here',
      registers,
    }),
  };
}

/** Facts of the shared database: every replica reports the same, so dashboards take the max (decision 0194). */
export function deliveryStateMetrics(metrics: Metrics, counts: () => Promise<DeliveryCounts>): void {
  const registers = [metrics.registry];
  let reading: Promise<void> | undefined;
  const read = () => {
    reading ??= counts()
      .then((c) => {
        retryPending.set(c.retryPending);
        failing.set(c.subscriptionsFailing);
        disabled.set(c.subscriptionsDisabled);
      })
      .catch(() => {
        // No value rather than a stale one.
        retryPending.reset();
        failing.reset();
        disabled.reset();
      })
      .finally(() => {
        setImmediate(() => {
          reading = undefined;
        });
      });
    return reading;
  };
  const retryPending: Gauge = new Gauge({
    name: 'webhook_deliveries_retry_pending',
    help: 'Deliveries that failed at least once and wait for their next attempt',
    registers,
    collect: read,
  });
  const failing: Gauge = new Gauge({
    name: 'webhook_subscriptions_failing',
    help: 'Active subscriptions with a delivery waiting for a retry, or whose last delivery ended failed',
    registers,
    collect: read,
  });
  const disabled: Gauge = new Gauge({
    name: 'webhook_subscriptions_disabled',
    help: 'Subscriptions disabled after a run of failed deliveries, until an operator enables them again',
    registers,
    collect: read,
  });
}
