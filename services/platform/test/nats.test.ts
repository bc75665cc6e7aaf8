import { expect } from 'chai';
import { connectNats, ensureEventStream, type Nats, streamPublisherOf } from '../src/events/nats.js';
import { createLogger } from '../src/logging.js';
import { randomSuffix, TEST_NATS_URL } from '../src/testing.js';

describe('StreamPublisher: many JetStream publishes at once (real NATS)', () => {
  let nats: Nats;
  const run = randomSuffix();
  const stream = `TP_${run}`;
  const prefix = `tp${run}`;

  before(async () => {
    nats = await connectNats(TEST_NATS_URL, 'publisher-test', createLogger('test', 'silent'));
    await ensureEventStream(nats.jsm, stream, prefix);
  });
  after(async () => {
    await nats?.jsm.streams.delete(stream).catch(() => undefined);
    await nats?.nc.close();
  });

  it('resolves once the stream has every message, each with its Nats-Msg-Id, and drops repeated ids', async () => {
    const publisher = streamPublisherOf(nats.js)!;
    const messages = Array.from({ length: 300 }, (_, i) => ({
      subject: `${prefix}.lead.created`,
      data: JSON.stringify({ i }),
      msgId: `m${i}`,
    }));
    await publisher.publishAll(messages, 5000);
    await publisher.publishAll(messages.slice(0, 10), 5000);
    expect((await nats.jsm.streams.info(stream)).state.messages).to.equal(300);
    const last = await nats.jsm.streams.getMessage(stream, { last_by_subj: `${prefix}.lead.created` });
    expect(last?.header.get('Nats-Msg-Id')).to.equal('m299');
    expect(last?.json()).to.deep.equal({ i: 299 });
  });

  it('rejects when no stream takes the subject', async () => {
    const publisher = streamPublisherOf(nats.js)!;
    const err = await publisher.publishAll([{ subject: `nostream${run}.x`, data: '{}', msgId: 'x' }], 2000).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.match(/JetStream/);
  });
});
