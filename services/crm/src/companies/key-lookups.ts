import { separatePool } from '@svc/platform/db/pool';
import type { Logger } from '@svc/platform/logging';
import type { ResolveKeyResponse } from '@svc/proto/crm/v1/crm';
import type { Pool } from 'pg';
import { resolveKey } from './company.store.js';

/** A look-up is one indexed statement per key and cache period: a small pool suffices. */
const KEY_POOL_MAX = 2;

const opt = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

/** Own pool (decision 0145), so look-ups do not queue behind crm's other requests and miss the gateway deadline. */
export class KeyLookups {
  private readonly pool: Pool;

  constructor(databaseUrl: string, schema: string, logger: Logger) {
    this.pool = separatePool({ url: databaseUrl, schema, max: KEY_POOL_MAX, logger, what: 'key look-up' });
  }

  async resolve(keyHash: string): Promise<ResolveKeyResponse> {
    const found = await resolveKey(this.pool, keyHash);
    if (!found) return {};
    const { key: k, creator: u } = found;
    return {
      key: {
        id: k.id,
        company_id: k.companyId,
        created_by_user_id: k.createdByUserId,
        permissions: k.permissions,
        allowed_domain: opt(k.allowedDomain),
        valid_from: opt(k.validFrom)?.toISOString(),
        valid_until: opt(k.validUntil)?.toISOString(),
        active: k.active,
        deleted: k.deletedAt !== null && k.deletedAt !== undefined,
        rate_limit_per_minute: opt(k.rateLimitPerMinute),
      },
      creator: u
        ? { id: u.id, company_id: k.companyId, name: u.name, email: u.email, avatar: opt(u.avatar), active: u.active, archived: u.archived }
        : undefined,
    };
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
