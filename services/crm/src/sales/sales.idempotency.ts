import { conflict } from '@svc/platform/errors';
import type { Pool, PoolClient } from 'pg';
import type { MeasurementConsent } from '../marketing/acquisition.entity.js';
import type { AttemptOwner } from './sales.attempts.store.js';
import type { KeyStore } from './sales.keys.store.js';

export interface PersonReceipt {
  id: string;
  match: 'created' | 'email' | 'phone' | 'website' | 'other' | 'id';
}

/** Person receipts are kept with the key so replays answer them too. */
export interface CreationAnswer {
  id: string;
  code: number;
  title: string;
  measurement_consent: MeasurementConsent;
  person?: PersonReceipt;
  persons?: PersonReceipt[];
}

/** Settled last in the creation's transaction, so no crash can leave a key failed while its record exists. */
export type SettleKey = (
  client: PoolClient,
  record: { id: string; title: string },
  receipts: Pick<CreationAnswer, 'person' | 'persons'>,
) => Promise<void>;

const FAILED_MESSAGE = 'idempotency key: a creation with this key failed after starting; the key stays consumed, use a new one';

/** Spec rule 5: runs once per (company, key); others get the finished creation or 409 (decision 0111). */
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
