import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection, nanos } from '@nats-io/transport-node';
import type { Logger } from '../logging.js';

export interface Nats {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

export async function connectNats(url: string, name: string, logger: Logger): Promise<Nats> {
  const nc = await connect({
    servers: url.split(','),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
    // No stack captured up front for every request (each JetStream publish is one): that cost the relay a fifth
    // of its CPU. Errors keep their message, which is all the logs use.
    noAsyncTraces: true,
  });
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') logger.warn({ nats: s.type }, 'nats connection status');
    }
  })().catch(() => undefined);
  const jsm = await jetstreamManager(nc);
  return { nc, js: jetstream(nc), jsm };
}

/**
 * The one stream of all events (a subject per event key). The duplicate window absorbs a relay that
 * publishes the same event id twice after a crash between publish and mark.
 */
export async function ensureEventStream(jsm: JetStreamManager, stream: string, subjectPrefix: string): Promise<void> {
  const config = {
    name: stream,
    subjects: [`${subjectPrefix}.>`],
    duplicate_window: nanos(10 * 60 * 1000),
    max_age: nanos(7 * 24 * 60 * 60 * 1000),
  };
  try {
    await jsm.streams.info(stream);
  } catch {
    try {
      await jsm.streams.add(config);
    } catch (err) {
      // Another replica created it between our look-up and our add.
      await jsm.streams.info(stream).catch(() => {
        throw err;
      });
    }
  }
}
