import { separatePool } from '@svc/platform/db/pool';
import type { Logger } from '@svc/platform/logging';
import type { ResolveKeyResponse } from '@svc/proto/crm/v1/crm';
import type { Pool } from 'pg';

/**
 * Connections of the key look-ups' own pool. A look-up is one indexed statement of well under a millisecond, asked
 * at most once per key and cache period (500 ms) by each gateway: two connections serve thousands of keys.
 */
const KEY_POOL_MAX = 2;

interface KeyRow {
  id: string;
  company_id: string;
  created_by_user_id: string;
  permissions: string[];
  allowed_domain: string | null;
  valid_from: Date | null;
  valid_until: Date | null;
  active: boolean;
  deleted: boolean;
  rate_limit_per_minute: number | null;
  creator_id: string | null;
  creator_name: string | null;
  creator_email: string | null;
  creator_avatar: string | null;
  creator_active: boolean | null;
  creator_archived: boolean | null;
}

/** The key of a hash and its creator (a user of the key's company), in one statement. */
const RESOLVE_KEY = {
  name: 'crm_resolve_key',
  text: `select k.id, k.company_id, k.created_by_user_id, k.permissions, k.allowed_domain, k.valid_from, k.valid_until,
       k.active, k.deleted_at is not null as deleted, k.rate_limit_per_minute,
       u.id as creator_id, u.name as creator_name, u.email as creator_email, u.avatar as creator_avatar,
       u.active as creator_active, u.archived as creator_archived
  from integration_keys k
  left join users u on u.id = k.created_by_user_id and u.company_id = k.company_id
 where k.key_hash = $1`,
};

const opt = <T>(v: T | null): T | undefined => v ?? undefined;

/**
 * The gateway's key look-ups (crm.v1.CrmService/ResolveKey), on a small pool of their own (decision 0145). Every
 * request the gateway admits waits for this look-up when its key's cache entry is stale, and all the requests of
 * a key share one look-up: on the service's pool it queued behind the requests crm was already serving, and under
 * an overload that filled the pool it missed the gateway's 2 s deadline, which refused every request of the key
 * waiting for it (503) while the ones already admitted were still being answered.
 */
export class KeyLookups {
  private readonly pool: Pool;

  constructor(databaseUrl: string, schema: string, logger: Logger) {
    this.pool = separatePool({ url: databaseUrl, schema, max: KEY_POOL_MAX, logger, what: 'key look-up' });
  }

  async resolve(keyHash: string): Promise<ResolveKeyResponse> {
    const { rows } = await this.pool.query<KeyRow>({ ...RESOLVE_KEY, values: [keyHash] });
    const r = rows[0];
    if (!r) return {};
    return {
      key: {
        id: r.id,
        company_id: r.company_id,
        created_by_user_id: r.created_by_user_id,
        permissions: r.permissions,
        allowed_domain: opt(r.allowed_domain),
        valid_from: opt(r.valid_from)?.toISOString(),
        valid_until: opt(r.valid_until)?.toISOString(),
        active: r.active,
        deleted: r.deleted,
        rate_limit_per_minute: opt(r.rate_limit_per_minute),
      },
      creator:
        r.creator_id === null
          ? undefined
          : {
              id: r.creator_id,
              company_id: r.company_id,
              name: r.creator_name!,
              email: r.creator_email!,
              avatar: opt(r.creator_avatar),
              active: r.creator_active!,
              archived: r.creator_archived!,
            },
    };
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
