import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@svc/platform/logging';
import { z } from 'zod';
import { type ProviderConfig, providerConfigShape } from '../../src/providers/config.js';
import type { InboundEvent, InboundSink } from '../../src/providers/provider.js';
import { providerWebhooks } from '../../src/providers/webhook.js';

/** A sink that keeps every call, and fails the next ones while `failing` is set. */
export class RecordingSink implements InboundSink {
  readonly calls: InboundEvent[][] = [];
  failing = 0;
  async receive(events: InboundEvent[]): Promise<void> {
    if (this.failing > 0) {
      this.failing--;
      throw new Error('storage is down');
    }
    this.calls.push(events);
  }
}

export const SECRETS = {
  WHATSAPP_APP_SECRET: 'wa-app-secret-0123456789abcdef',
  WHATSAPP_VERIFY_TOKEN: 'wa-verify-token',
  INSTAGRAM_APP_SECRET: 'ig-app-secret-fedcba9876543210',
  INSTAGRAM_VERIFY_TOKEN: 'ig-verify-token',
};

export const signature = (raw: string | Buffer, secret: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

export interface WebhookServer {
  url: string;
  sink: RecordingSink;
  post(path: string, raw: string, headers?: Record<string, string>): Promise<Response>;
  stop(): Promise<void>;
}

/** The webhook handler on loopback as the chat service serves it; paths it does not take answer 404 here. */
export async function startWebhookServer(env: Record<string, string> = SECRETS, bodyLimit?: number): Promise<WebhookServer> {
  const config: ProviderConfig = z.object(providerConfigShape).parse(env);
  const sink = new RecordingSink();
  const handle = providerWebhooks({ config, sink, logger: createLogger('chat-test', 'silent'), bodyLimit });
  const server: Server = createServer((req, res) => {
    if (!handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    sink,
    post: (path, raw, headers = {}) =>
      fetch(`${url}${path}`, { method: 'POST', body: raw, headers: { 'content-type': 'application/json', ...headers } }),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
