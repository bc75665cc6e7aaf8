import type { Logger } from '@svc/platform/logging';
import type { Redis } from 'ioredis';
import type { KeyAuthenticator } from './keys.js';

const PUBLISH_TIMEOUT_MS = 1000;

/**
 * Revocation at once on every gateway (decision 0120): local drop, then a Redis publish before the admin call is
 * answered. A lost message is covered by the cache's TTL and by dropping the whole cache on resubscribing.
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

  /** Here at once; elsewhere once Redis has taken the message (or gave up). */
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

export function companyOfKeyChange(method: string | undefined, url: string): string | undefined {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return undefined;
  return KEY_CHANGES.exec(url)?.[1];
}
