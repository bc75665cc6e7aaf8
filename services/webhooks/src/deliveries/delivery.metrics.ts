import type { Metrics } from '@svc/platform/metrics';
import { Counter } from 'prom-client';

/** How deliveries move: which path started their attempts, and how many rows each hot statement carried. */
export interface DeliveryMetrics {
  /** Attempts started, by where the delivery came from: `issued` (leased as it was inserted) or `claimed`. */
  attemptsStarted: Counter<'source'>;
  /** Hot statements run, by kind (`issue`, `claim`, `record`), and the deliveries they carried. */
  statements: Counter<'kind'>;
  statementRows: Counter<'kind'>;
  /** Deliveries this process held whose lease another replica took (it stalled past the lease): not sent or not recorded here. */
  leasesLost: Counter;
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
    leasesLost: new Counter({
      name: 'webhook_leases_lost_total',
      help: 'Deliveries whose lease ran out in this process and may be with another replica: not sent, or their attempt not recorded, here',
      registers,
    }),
  };
}
