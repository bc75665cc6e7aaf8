import { AckPolicy } from '@nats-io/jetstream';
import { expect } from 'chai';
import { connectNats, ensureEventStream, type Nats } from '../src/events/nats.js';
import { createLogger } from '../src/logging.js';
import { consumerLagMetrics, createMetrics, type Metrics } from '../src/metrics.js';
import { randomSuffix, TEST_NATS_URL } from '../src/testing.js';

describe('metrics: JetStream consumer lag, read from the consumer at scrape (real NATS)', () => {
  const suffix = randomSuffix();
  const stream = `LAG_${suffix}`;
  const prefix = `lag${suffix}`;
  let nats: Nats;
  let metrics: Metrics;

  before(async () => {
    nats = await connectNats(TEST_NATS_URL, 'metrics-test', createLogger('metrics-test', 'silent'));
    await ensureEventStream(nats.jsm, stream, prefix);
    await nats.jsm.consumers.add(stream, { durable_name: 'lagging', ack_policy: AckPolicy.Explicit, filter_subject: `${prefix}.>` });
    metrics = createMetrics('lag-test');
    consumerLagMetrics(metrics, nats.jsm, stream, ['lagging']);
  });
  after(async () => {
    await nats?.jsm.streams.delete(stream).catch(() => undefined);
    await nats?.nc.close();
  });

  const gauge = async (name: string) => {
    const text = await metrics.registry.metrics();
    return Number(new RegExp(`^${name}\\{[^}]*consumer="lagging"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
  };

  it('reports messages not yet delivered and delivered but not acknowledged, per consumer', async () => {
    for (let i = 0; i < 3; i++) await nats.js.publish(`${prefix}.lead.created`, `{"i":${i}}`);
    expect(await gauge('jetstream_consumer_pending_messages')).to.equal(3);
    expect(await gauge('jetstream_consumer_ack_pending_messages')).to.equal(0);
    const consumer = await nats.js.consumers.get(stream, 'lagging');
    const msg = await consumer.next();
    expect(msg).to.not.equal(null);
    expect(await gauge('jetstream_consumer_pending_messages')).to.equal(2);
    expect(await gauge('jetstream_consumer_ack_pending_messages')).to.equal(1);
    await msg!.ackAck();
    expect(await gauge('jetstream_consumer_ack_pending_messages')).to.equal(0);
  });

  it('leaves the series out when the consumer cannot be asked', async () => {
    const gone = createMetrics('lag-gone-test');
    consumerLagMetrics(gone, nats.jsm, stream, ['nobody']);
    const text = await gone.registry.metrics();
    expect(text).to.include('# TYPE jetstream_consumer_pending_messages gauge');
    expect(text).to.not.match(/^jetstream_consumer_pending_messages\{/m);
  });
});
