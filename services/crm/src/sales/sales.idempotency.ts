import { run, type Statement, statement } from '@svc/platform/db/native';
import { conflict } from '@svc/platform/errors';
import type { Pool } from 'pg';
import type { MeasurementConsent } from '../marketing/acquisition.entity.js';
import { ATTEMPT_LOCK_CLASS, type AttemptOwner } from './sales.attempts.js';

/** No creation takes this long (the gateway gives up on its upstream after 60 s): an older attempt is dead. */
const ATTEMPT_MAX_SECONDS = 120;

/** How a creation resolved one of its persons (decision 0182). */
export interface PersonReceipt {
  id: string;
  match: 'created' | 'email' | 'phone' | 'website' | 'other' | 'id';
}

/**
 * What POST /leads and POST /deals answer (spec "Lead and deal creation response"), plus the receipts of the persons
 * the creation linked (`person`: the main one; `persons`: all, when more than one), kept with the key for replays.
 */
export interface CreationAnswer {
  id: string;
  code: number;
  title: string;
  measurement_consent: MeasurementConsent;
  person?: PersonReceipt;
  persons?: PersonReceipt[];
}

/** The three statements of a creation's idempotency keys (decision 0042), for one key table. */
export interface IdempotencySql {
  /** $1 company, $2 key, $3 the attempt's owner (AttemptOwner.id); a row when this call reserved the key. */
  reserveKey: Statement;
  /**
   * $1 company, $2 key: the key's status, whether a processing attempt is abandoned (decision 0111) and, when
   * done, the record's id, code, title, effective consent and person receipts.
   */
  keyLookup: Statement;
  /** $1 company, $2 key, $3 status, $4 record id, $5 title, $6 person receipts (jsonb); only a key still processing. */
  finishKey: Statement;
  /** $1 company, $2 key: a processing key whose attempt is dead becomes failed. */
  abandonKey: Statement;
}

/**
 * The statements for `keys` (company_id, key, status, <fk>, title, created_at, finished_at) of records in
 * `records` (alias r); `consent` is the SQL of the record's effective consent.
 */
export function idempotencySql(name: string, keys: string, records: string, fk: string, consent: string): IdempotencySql {
  return {
    reserveKey: statement(
      `crm_${name}_key_reserve`,
      `insert into ${keys} (company_id, key, status, created_at, attempt_owner) values ($1, $2, 'processing', now(), $3)
       on conflict do nothing returning key`,
    ),
    keyLookup: statement(
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
    ),
    finishKey: statement(
      `crm_${name}_key_finish`,
      `update ${keys} set status = $3, ${fk} = $4, title = $5, persons = $6::jsonb, finished_at = now()
       where company_id = $1 and key = $2 and status = 'processing'`,
    ),
    abandonKey: statement(
      `crm_${name}_key_abandon`,
      `update ${keys} set status = 'failed', finished_at = now() where company_id = $1 and key = $2 and status = 'processing'`,
    ),
  };
}

/**
 * Spec rule 5: `create` runs once per (company, key). The key is reserved in autocommit (one concurrent caller
 * wins) under this process's attempt owner; the others answer the finished creation, or 409 while it runs or once
 * it failed (the key stays consumed), including once its attempt died with its process (decision 0111).
 */
export async function createOnce(
  pool: Pool,
  sql: IdempotencySql,
  owner: AttemptOwner,
  companyId: string,
  key: string,
  create: () => Promise<CreationAnswer>,
): Promise<CreationAnswer> {
  await owner.ready();
  const [reserved] = await run(pool, sql.reserveKey, [companyId, key, owner.id]);
  if (!reserved) return replay(pool, sql, companyId, key);
  let created: CreationAnswer;
  try {
    created = await create();
  } catch (err) {
    await run(pool, sql.finishKey, [companyId, key, 'failed', null, null, null]);
    throw err;
  }
  const receipts = created.person ? { person: created.person, ...(created.persons ? { persons: created.persons } : {}) } : null;
  await run(pool, sql.finishKey, [companyId, key, 'done', created.id, created.title, receipts && JSON.stringify(receipts)]);
  return created;
}

/** The answer to a key already used: the finished creation's record, else 409 (still processing, or failed). */
async function replay(pool: Pool, sql: IdempotencySql, companyId: string, key: string): Promise<CreationAnswer> {
  const [row] = await run<{
    status: string;
    abandoned: boolean;
    id: string | null;
    code: number | null;
    title: string | null;
    consent: MeasurementConsent;
    persons: Pick<CreationAnswer, 'person' | 'persons'> | null;
  }>(pool, sql.keyLookup, [companyId, key]);
  if (row?.status === 'done' && row.id && row.code !== null) {
    return { id: row.id, code: Number(row.code), title: row.title ?? '', measurement_consent: row.consent, ...row.persons };
  }
  if (row?.abandoned) await run(pool, sql.abandonKey, [companyId, key]);
  if (row?.status === 'failed' || row?.abandoned) {
    throw conflict('idempotency key: a creation with this key failed after starting; the key stays consumed, use a new one');
  }
  throw conflict('idempotency key: a creation with this key is still processing');
}
