import { run, type Statement, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import type { MeasurementConsent } from '../marketing/acquisition.entity.js';
import { ATTEMPT_LOCK_CLASS } from './sales.attempts.store.js';

/** The gateway gives up well before this: an older attempt is dead. */
const ATTEMPT_MAX_SECONDS = 120;

export interface KeyState {
  status: string;
  abandoned: boolean;
  id: string | null;
  code: number | null;
  title: string | null;
  consent: MeasurementConsent;
  persons: Record<string, unknown> | null;
}

/** Idempotency keys of one kind's creation (decision 0042). */
export class KeyStore {
  private readonly reserveKey: Statement;
  private readonly keyLookup: Statement;
  private readonly finishKey: Statement;
  private readonly abandonKey: Statement;

  constructor(name: string, keys: string, records: string, fk: string, consent: string) {
    this.reserveKey = statement(
      `crm_${name}_key_reserve`,
      `insert into ${keys} (company_id, key, status, created_at, attempt_owner) values ($1, $2, 'processing', now(), $3)
       on conflict do nothing returning key`,
    );
    // Abandoned when too old or when its process lost the advisory lock (decision 0111).
    this.keyLookup = statement(
      `crm_${name}_key_lookup`,
      `select k.status, r.id, r.code, k.title, ${consent} as consent, k.persons,
         k.status = 'processing' and (
           k.created_at < now() - interval '${ATTEMPT_MAX_SECONDS} seconds'
           or (k.attempt_owner is not null and not exists (
             select 1 from pg_locks l
             where l.locktype = 'advisory' and l.database = (select oid from pg_database where datname = current_database())
               and l.classid = ${ATTEMPT_LOCK_CLASS}::oid and l.objid = k.attempt_owner::oid and l.objsubid = 2 and l.granted))
         ) as abandoned
       from ${keys} k left join ${records} r on r.company_id = k.company_id and r.id = k.${fk}
       where k.company_id = $1 and k.key = $2`,
    );
    this.finishKey = statement(
      `crm_${name}_key_finish`,
      `update ${keys} set status = $3, ${fk} = $4, title = $5, persons = $6::jsonb, finished_at = now()
       where company_id = $1 and key = $2 and status = 'processing' returning key`,
    );
    this.abandonKey = statement(
      `crm_${name}_key_abandon`,
      `update ${keys} set status = 'failed', finished_at = now() where company_id = $1 and key = $2 and status = 'processing'
       returning key`,
    );
  }

  async reserve(db: Pool | PoolClient, companyId: string, key: string, owner: number): Promise<boolean> {
    return (await run(db, this.reserveKey, [companyId, key, owner])).length > 0;
  }

  async lookup(db: Pool | PoolClient, companyId: string, key: string): Promise<KeyState | undefined> {
    const [row] = await run<KeyState & Record<string, unknown>>(db, this.keyLookup, [companyId, key]);
    return row;
  }

  /** True when it was still processing. */
  async finish(
    db: Pool | PoolClient,
    companyId: string,
    key: string,
    outcome: { status: 'done'; id: string; title: string; persons: string | null } | { status: 'failed' },
  ): Promise<boolean> {
    const done = outcome.status === 'done' ? outcome : null;
    const rows = await run(db, this.finishKey, [
      companyId,
      key,
      outcome.status,
      done?.id ?? null,
      done?.title ?? null,
      done?.persons ?? null,
    ]);
    return rows.length > 0;
  }

  async abandon(db: Pool | PoolClient, companyId: string, key: string): Promise<boolean> {
    return (await run(db, this.abandonKey, [companyId, key])).length > 0;
  }
}
