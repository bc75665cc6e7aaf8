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
  const js = jetstream(nc);
  connections.set(js, nc);
  return { nc, js, jsm };
}

/** The connection under each JetStream client made by connectNats (the client does not expose it). */
const connections = new WeakMap<JetStreamClient, NatsConnection>();
const publishers = new WeakMap<NatsConnection, StreamPublisher>();

/** The StreamPublisher of the connection under `js`, when connectNats made it. */
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
  /** Nats-Msg-Id: the stream drops a second message with the same id within its duplicate window. */
  msgId: string;
  /** Sent as the `traceparent` header when the event was traced (decision 0200). */
  traceparent?: string | undefined;
}

type AckWaiter = (err: Error | null) => void;

/**
 * JetStream publishes of many messages at once: each is a core publish with Nats-Msg-Id and a reply subject under
 * one inbox this publisher subscribes to, and the stream's acks (duplicates included) are matched by that subject.
 * js.publish does the same one message at a time, with a request object, a timer and an Error (whose stack trace
 * is the cost) per message: a fifth of the relay's CPU.
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
    // An empty answer is a status: 503 when no stream listens on the subject (or JetStream is unavailable).
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
