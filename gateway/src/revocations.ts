import type { Logger } from '@svc/platform/logging';
import type { Redis } from 'ioredis';
import type { KeyAuthenticator } from './keys.js';

/** How long an admin call that changed keys waits for Redis to take the broadcast before it answers anyway. */
const PUBLISH_TIMEOUT_MS = 1000;

/**
 * Revocation at once on every gateway process (decision 0120). The gateway that proxied an admin change of a
 * company's keys or users drops the company's cached look-ups itself, then publishes the company id on a Redis
 * channel every gateway subscribes to, before the admin call is answered; the other gateways drop theirs when the
 * message arrives. A message lost while a subscriber was disconnected is covered twice: the cache's TTL
 * (KEY_CACHE_TTL_MS, at most 1 s) and the whole cache dropped when the subscription is made again.
 */
export class KeyRevocations {
  private readonly channel: string;
  private subscribed = false;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    keyPrefix: string,
    private readonly keys: KeyAuthenticator,
    private readonly logger: Logger,
  ) {
    this.channel = `${keyPrefix}keys:revoked`;
  }

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, companyId: string) => {
      if (channel === this.channel) this.keys.forgetCompany(companyId);
    });
    // ioredis subscribes again after a reconnection; what was published meanwhile never arrives.
    this.subscriber.on('ready', () => {
      if (this.subscribed) this.keys.forgetAll();
    });
    this.subscriber.on('error', (err: Error) => this.logger.warn({ err: err.message }, 'key revocation subscription'));
    await this.subscriber.subscribe(this.channel);
    this.subscribed = true;
  }

  /** Drops the company's keys here, and on the other gateways once Redis has taken the message (or gave up). */
  async revoke(companyId: string, requestId?: string): Promise<void> {
    this.keys.forgetCompany(companyId);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('publish timed out')), PUBLISH_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.publisher.publish(this.channel, companyId), timeout]);
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, companyId, request_id: requestId },
        'key revocation not broadcast; other gateways drop it within KEY_CACHE_TTL_MS',
      );
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.subscriber.disconnect();
  }
}

const KEY_CHANGES = /^\/admin\/v1\/companies\/([^/?]+)\/(?:keys|users)(?:[/?]|$)/;

/** The company whose keys an admin request may change (a write to its keys or users), else undefined. */
export function companyOfKeyChange(method: string | undefined, url: string): string | undefined {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return undefined;
  return KEY_CHANGES.exec(url)?.[1];
}
