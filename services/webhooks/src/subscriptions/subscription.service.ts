import { randomBytes } from 'node:crypto';
import { notFound, requireUuid } from '@svc/platform/errors';
import type { CrmPeer } from '@svc/platform/peers/crm';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { z } from 'zod';
import type { WebhookAuth } from '../deliveries/delivery.entity.js';
import { standardWebhooksSecret } from '../deliveries/signing.js';
import type { Subscription } from './subscription.entity.js';
import {
  type createSubscriptionBody,
  DEFAULT_MAX_RETRIES,
  DEFAULT_ROTATION_GRACE_SECONDS,
  type updateSubscriptionBody,
} from './subscription.schema.js';
import { findSubscription, insertSubscription, updateSubscription } from './subscription.store.js';

const redactAuth = (auth: WebhookAuth | null | undefined) => {
  if (!auth) return null;
  if (auth.type === 'basic') return { type: auth.type, username: auth.username, password: '[redacted]' };
  if (auth.type === 'bearer') return { type: auth.type, token: '[redacted]' };
  return { type: auth.type, header: auth.header, value: '[redacted]' };
};

export const subscriptionView = (s: Subscription) => ({
  id: s.id,
  url: s.url,
  description: s.description ?? null,
  events: s.events,
  secret: s.secret,
  standard_webhooks_secret: standardWebhooksSecret(s.secret),
  previous_secret_expires_at: s.previousSecret && s.previousSecretExpiresAt ? s.previousSecretExpiresAt.toISOString() : null,
  max_retries: s.maxRetries,
  headers: s.headers,
  auth: redactAuth(s.auth),
  active: s.active,
  disabled_at: s.disabledAt ? s.disabledAt.toISOString() : null,
  disabled_reason: s.disabledReason ?? null,
  created_at: s.createdAt.toISOString(),
  updated_at: s.updatedAt.toISOString(),
});

export class SubscriptionService {
  constructor(
    private readonly crm: CrmPeer,
    private readonly pool: () => Promise<Pool>,
  ) {}

  async create(companyId: string, body: z.infer<typeof createSubscriptionBody>): Promise<Subscription> {
    await this.crm.getCompany(requireUuid(companyId, 'Company'));
    const now = new Date();
    const sub: Subscription = {
      id: uuidv7(),
      companyId,
      url: body.url,
      description: body.description ?? null,
      events: [...new Set(body.events)],
      secret: body.secret ?? randomBytes(32).toString('hex'),
      maxRetries: body.max_retries ?? DEFAULT_MAX_RETRIES,
      headers: body.headers ?? {},
      auth: body.auth ?? null,
      active: body.active ?? true,
      previousSecret: null,
      previousSecretExpiresAt: null,
      consecutiveFailures: 0,
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    };
    await insertSubscription(await this.pool(), sub);
    return sub;
  }

  /** Another company's, a deleted one or none is a 404. */
  async require(companyId: string, id: string): Promise<Subscription> {
    await this.crm.getCompany(requireUuid(companyId, 'Company'));
    const sub = await findSubscription(await this.pool(), companyId, requireUuid(id, 'Webhook'));
    if (!sub) throw notFound('Webhook');
    return sub;
  }

  async update(companyId: string, id: string, body: z.infer<typeof updateSubscriptionBody>): Promise<Subscription> {
    const read = await this.require(companyId, id);
    const sub = { ...read };
    if (body.url !== undefined) sub.url = body.url;
    if (body.description !== undefined) sub.description = body.description;
    if (body.events !== undefined) sub.events = [...new Set(body.events)];
    const newSecret = body.rotate_secret ? randomBytes(32).toString('hex') : body.secret;
    if (newSecret !== undefined && newSecret !== sub.secret) {
      sub.previousSecret = sub.secret;
      sub.previousSecretExpiresAt = new Date(Date.now() + 1000 * (body.secret_rotation_grace_seconds ?? DEFAULT_ROTATION_GRACE_SECONDS));
      sub.secret = newSecret;
    }
    if (body.max_retries !== undefined) sub.maxRetries = body.max_retries;
    if (body.headers !== undefined) sub.headers = body.headers;
    if (body.auth !== undefined) sub.auth = body.auth;
    if (body.active === true && !sub.active) {
      // Re-enabled: a fresh record, and only events from now on.
      Object.assign(sub, { disabledAt: null, disabledReason: null, consecutiveFailures: 0, failingSince: null });
    }
    if (body.active !== undefined) sub.active = body.active;
    sub.updatedAt = new Date();
    await updateSubscription(await this.pool(), read, sub);
    return sub;
  }

  async remove(companyId: string, id: string): Promise<Subscription> {
    const read = await this.require(companyId, id);
    const sub = { ...read, deletedAt: new Date(), active: false };
    await updateSubscription(await this.pool(), read, sub);
    return sub;
  }
}
