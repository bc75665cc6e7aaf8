import { conflict } from '@svc/platform/errors';
import type { Pool, PoolClient } from 'pg';
import type { MeasurementConsent } from '../marketing/acquisition.entity.js';
import type { AttemptOwner } from './sales.attempts.store.js';
import type { KeyStore } from './sales.keys.store.js';

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

/**
 * Settles the key in the creation's own transaction: `done` with the record, committed or rolled
 * back with it, so no crash or lost liveness session between the two can leave a key failed while its record
 * exists. It runs last in the transaction: a replay that declared the attempt dead before it makes the creation
 * roll back (409, the key stays failed); one that comes after it waits for the commit and finds the key done.
 */
export type SettleKey = (
  client: PoolClient,
  record: { id: string; title: string },
  receipts: Pick<CreationAnswer, 'person' | 'persons'>,
) => Promise<void>;

const FAILED_MESSAGE = 'idempotency key: a creation with this key failed after starting; the key stays consumed, use a new one';

/**
 * Spec rule 5: `create` runs once per (company, key). The key is reserved in autocommit (one concurrent caller
 * wins) under this process's attempt owner; the others answer the finished creation, or 409 while it runs or once
 * it failed (the key stays consumed), including once its attempt died with its process (decision 0111). `create`
 * calls `settle` in its transaction; a creation that fails marks the key failed afterwards (only while still
 * processing: a settled key stays done).
 */
export async function createOnce(
  pool: Pool,
  keys: KeyStore,
  owner: AttemptOwner,
  companyId: string,
  key: string,
  create: (settle: SettleKey) => Promise<CreationAnswer>,
): Promise<CreationAnswer> {
  await owner.ready();
  if (!(await keys.reserve(pool, companyId, key, owner.id))) return replay(pool, keys, companyId, key);
  let settled = false;
  const settle: SettleKey = async (client, record, receipts) => {
    const persons = receipts.person ? JSON.stringify(receipts) : null;
    if (!(await keys.finish(client, companyId, key, { status: 'done', id: record.id, title: record.title, persons })))
      throw conflict(FAILED_MESSAGE);
    settled = true;
  };
  try {
    const created = await create(settle);
    if (!settled) throw new Error('a keyed creation returned without settling its idempotency key');
    return created;
  } catch (err) {
    await keys.finish(pool, companyId, key, { status: 'failed' });
    throw err;
  }
}

/** The answer to a key already used: the finished creation's record, else 409 (still processing, or failed). */
async function replay(pool: Pool, keys: KeyStore, companyId: string, key: string, again = true): Promise<CreationAnswer> {
  const row = await keys.lookup(pool, companyId, key);
  if (row?.status === 'done' && row.id && row.code !== null) {
    const persons = row.persons as Pick<CreationAnswer, 'person' | 'persons'> | null;
    return { id: row.id, code: Number(row.code), title: row.title ?? '', measurement_consent: row.consent, ...persons };
  }
  if (row?.abandoned) {
    // The attempt settling the key in its transaction holds the row: this waits for it, and finds nothing to
    // abandon when it committed the key done, so the key is read again.
    if (!(await keys.abandon(pool, companyId, key)) && again) return replay(pool, keys, companyId, key, false);
  }
  if (row?.status === 'failed' || row?.abandoned) throw conflict(FAILED_MESSAGE);
  throw conflict('idempotency key: a creation with this key is still processing');
}
