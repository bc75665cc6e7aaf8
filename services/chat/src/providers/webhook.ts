import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorBody, type ErrorKind, errorBody, errorBodyOf, invalidField } from '@svc/platform/errors';
import type { Logger } from '@svc/platform/logging';
import type { z } from 'zod';
import type { ProviderConfig } from './config.js';
import { instagramCallback, instagramEvents } from './instagram/inbound.js';
import type { InboundEvent, InboundSink } from './provider.js';
import { whatsappCallback, whatsappEvents } from './whatsapp/inbound.js';

/** Reached without an integration key: X-Hub-Signature-256 is checked over the raw bytes before parsing; 200 only once the sink has the events. */
export interface ProviderWebhookOptions {
  config: ProviderConfig;
  sink: InboundSink;
  logger: Logger;
  /** Bytes; Meta batches many updates in one callback. */
  bodyLimit?: number;
}

interface Channel<S extends z.ZodType> {
  secret?: string;
  verifyToken?: string;
  schema: S;
  events: (callback: z.infer<S>) => InboundEvent[];
}

export const WEBHOOK_PATHS = { whatsapp: '/providers/whatsapp/webhook', instagram: '/providers/instagram/webhook' } as const;

export function providerWebhooks(options: ProviderWebhookOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { config, sink, logger } = options;
  const limit = options.bodyLimit ?? 8 * 1024 * 1024;
  const channels = new Map<string, Channel<z.ZodType>>([
    [
      WEBHOOK_PATHS.whatsapp,
      {
        secret: config.WHATSAPP_APP_SECRET,
        verifyToken: config.WHATSAPP_VERIFY_TOKEN,
        schema: whatsappCallback,
        events: whatsappEvents,
      } as Channel<z.ZodType>,
    ],
    [
      WEBHOOK_PATHS.instagram,
      {
        secret: config.INSTAGRAM_APP_SECRET,
        verifyToken: config.INSTAGRAM_VERIFY_TOKEN,
        schema: instagramCallback,
        events: instagramEvents,
      } as Channel<z.ZodType>,
    ],
  ]);

  const serve = async (req: IncomingMessage, res: ServerResponse, url: URL, channel: Channel<z.ZodType>) => {
    if (req.method === 'GET') {
      req.resume();
      const q = url.searchParams;
      const challenge = q.get('hub.challenge');
      if (
        q.get('hub.mode') !== 'subscribe' ||
        !challenge ||
        !channel.verifyToken ||
        !sameSecret(q.get('hub.verify_token') ?? '', channel.verifyToken)
      ) {
        return fail(res, 'forbidden', 'hub.verify_token: does not match');
      }
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(challenge);
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      return fail(res, 'not_found', `Cannot ${req.method} ${url.pathname}`);
    }
    if (!channel.secret) {
      req.resume();
      return fail(res, 'forbidden', `${url.pathname}: the app secret is not configured`);
    }
    const signature = /^sha256=([0-9a-f]{64})$/i.exec(String(req.headers['x-hub-signature-256'] ?? ''));
    if (!signature?.[1]) {
      req.resume();
      return fail(res, 'unauthorized', 'x-hub-signature-256: missing or malformed');
    }
    const raw = await readRaw(req, limit);
    if (raw === undefined) return refuse(res, 'body', `larger than ${limit} bytes`);
    const expected = createHmac('sha256', channel.secret).update(raw).digest();
    if (!timingSafeEqual(expected, Buffer.from(signature[1], 'hex')))
      return fail(res, 'forbidden', 'x-hub-signature-256: does not match the body');

    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return refuse(res, 'body', 'malformed JSON');
    }
    const parsed = channel.schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return refuse(res, issue?.path.join('.') || 'body', issue?.message ?? 'invalid');
    }
    const events = channel.events(parsed.data);
    if (events.length > 0) {
      try {
        await sink.receive(events);
      } catch (err) {
        logger.error({ err, path: url.pathname, events: events.length }, 'inbound callback not stored; the provider will resend it');
        return fail(res, 'internal', 'the callback could not be stored');
      }
    }
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('EVENT_RECEIVED');
  };

  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const channel = channels.get(url.pathname);
    if (!channel) return false;
    serve(req, res, url, channel).catch((err: unknown) => {
      logger.error({ err, path: url.pathname }, 'provider webhook failed');
      if (!res.headersSent) fail(res, 'internal', 'Internal server error');
    });
    return true;
  };
}

function fail(res: ServerResponse, kind: ErrorKind, message: string): void {
  send(res, errorBody(kind, message));
}

/** A 400 naming its field, with the field list every 400 carries. */
function refuse(res: ServerResponse, field: string, message: string): void {
  send(res, errorBodyOf(invalidField(field, message)));
}

function send(res: ServerResponse, body: ErrorBody): void {
  res.writeHead(body.statusCode, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

/** Compares through digests, so neither the length nor the content of the secret shows in the timing. */
function sameSecret(given: string, secret: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

/** The body as received, or undefined once it passes `limit` (the rest is drained, not kept). */
async function readRaw(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) over = true;
    if (!over) chunks.push(chunk as Buffer);
  }
  return over ? undefined : Buffer.concat(chunks, size);
}
