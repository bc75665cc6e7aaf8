import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, createInbox, headers, type Msg, type NatsConnection, nanos } from '@nats-io/transport-node';
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
    // No stack captured per request: each JetStream publish is one, and logs use only the message.
    noAsyncTraces: true,
  });
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') logger.warn({ nats: s.type }, 'nats connection status');
    }
  })().catch(() => undefined);
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  connections.set(js, nc);
  return { nc, js, jsm };
}

const connections = new WeakMap<JetStreamClient, NatsConnection>();
const publishers = new WeakMap<NatsConnection, StreamPublisher>();

export function streamPublisherOf(js: JetStreamClient): StreamPublisher | undefined {
  const nc = connections.get(js);
  if (!nc) return undefined;
  let publisher = publishers.get(nc);
  if (!publisher) {
    publisher = new StreamPublisher(nc);
    publishers.set(nc, publisher);
  }
  return publisher;
}

export interface StreamMessage {
  subject: string;
  data: string;
  /** The stream drops a second message with the same id within its duplicate window. */
  msgId: string;
  traceparent?: string | undefined;
}

type AckWaiter = (err: Error | null) => void;

/**
 * Publishes many messages under one reply inbox and matches the stream's acks by subject: js.publish makes a request
 * object, a timer and an Error (with its costly stack) per message.
 */
export class StreamPublisher {
  private readonly inbox = createInbox();
  private readonly waiting = new Map<string, AckWaiter>();
  private next = 0;

  constructor(private readonly nc: NatsConnection) {
    nc.subscribe(`${this.inbox}.*`, { callback: (err, msg) => (err ? undefined : this.answered(msg)) });
  }

  /** Resolves once the stream has acked every message; rejects at the first refusal, or after `timeoutMs`. */
  publishAll(messages: StreamMessage[], timeoutMs: number): Promise<void> {
    if (!messages.length) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const tokens: string[] = [];
      let left = messages.length;
      const finish = (err: Error | null) => {
        clearTimeout(timer);
        for (const t of tokens) this.waiting.delete(t);
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(
        () => finish(new Error(`JetStream acked ${messages.length - left} of ${messages.length} messages within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const acked: AckWaiter = (err) => {
        if (err) finish(err);
        else if (--left === 0) finish(null);
      };
      try {
        for (const m of messages) {
          const token = (this.next++).toString(36);
          tokens.push(token);
          this.waiting.set(token, acked);
          const h = headers();
          h.set('Nats-Msg-Id', m.msgId);
          if (m.traceparent) h.set('traceparent', m.traceparent);
          this.nc.publish(m.subject, m.data, { reply: `${this.inbox}.${token}`, headers: h });
        }
      } catch (err) {
        finish(err as Error);
      }
    });
  }

  private answered(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1);
    const acked = this.waiting.get(token);
    if (!acked) return;
    this.waiting.delete(token);
    // An empty answer is a status: 503 when no stream listens on the subject.
    if (!msg.data.length) {
      acked(new Error(`JetStream did not take the message: ${msg.headers?.code ?? '?'} ${msg.headers?.description ?? ''}`.trim()));
      return;
    }
    const ack = msg.json<{ stream?: string; error?: { code: number; description: string } }>();
    acked(
      ack.error || !ack.stream ? new Error(`JetStream refused the message: ${ack.error?.description ?? 'no stream in the ack'}`) : null,
    );
  }
}

/** Its duplicate window absorbs a relay that publishes an event twice after a crash between publish and mark. */
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
      await jsm.streams.info(stream).catch(() => {
        throw err;
      });
    }
  }
}
