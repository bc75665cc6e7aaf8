import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Db } from '../db.js';
import { Company, IntegrationKey, User } from './company.entity.js';

const COMPANIES = tableOf(Company);
const USERS = tableOf(User);
const KEYS = tableOf(IntegrationKey);

const COMPANY = statement('crm_company_by_id', `select ${COMPANIES.select('c')} from companies c where c.id = $1`);
const COMPANY_LOCKED = statement('crm_company_by_id_locked', `select ${COMPANIES.select('c')} from companies c where c.id = $1 for update`);
const INSERT_COMPANY = statement('crm_company_insert', COMPANIES.insert());
const UPDATE_COMPANY = statement('crm_company_update', COMPANIES.update(['id']));

const USER = statement('crm_user_by_id', `select ${USERS.select('u')} from users u where u.company_id = $1 and u.id = $2`);
const USER_LOCKED = statement(
  'crm_user_by_id_locked',
  `select ${USERS.select('u')} from users u where u.company_id = $1 and u.id = $2 for update`,
);
const INSERT_USER = statement('crm_user_insert', USERS.insert());
const UPDATE_USER = statement('crm_user_update', USERS.update(['id', 'companyId']));
const USERS_BY_IDS = statement(
  'crm_users_by_ids',
  `select ${USERS.select('u')} from users u where u.company_id = $1 and u.id = any($2::uuid[])`,
);

const LIVE_KEY_LOCKED = statement(
  'crm_key_live_locked',
  `select ${KEYS.select('k')} from integration_keys k where k.company_id = $1 and k.id = $2 and k.deleted_at is null for update`,
);
const INSERT_KEY = statement('crm_key_insert', KEYS.insert());
const UPDATE_KEY = statement('crm_key_update', KEYS.update(['id', 'companyId']));
/** The key of a hash and its creator (a user of the key's company), in one statement. */
const RESOLVE_KEY = statement(
  'crm_resolve_key',
  `select ${KEYS.select('k')},
     case when u.id is null then null else ${USERS.json('u')} end as creator
   from integration_keys k left join users u on u.id = k.created_by_user_id and u.company_id = k.company_id
   where k.key_hash = $1`,
);

const first = <R>(rows: R[]): R | null => rows[0] ?? null;

export async function findCompany(db: Db, id: string, lock = false): Promise<Company | null> {
  return first((await run(db, lock ? COMPANY_LOCKED : COMPANY, [id])).map((r) => COMPANIES.hydrate(r)));
}

export async function insertCompany(db: Db, company: Company): Promise<void> {
  await run(db, INSERT_COMPANY, COMPANIES.values(company));
}

export async function updateCompany(db: Db, company: Company): Promise<void> {
  await run(db, UPDATE_COMPANY, COMPANIES.values(company));
}

export async function findUser(db: Db, companyId: string, id: string, lock = false): Promise<User | null> {
  return first((await run(db, lock ? USER_LOCKED : USER, [companyId, id])).map((r) => USERS.hydrate(r)));
}

export async function findUsers(db: Db, companyId: string, ids: string[]): Promise<User[]> {
  return ids.length ? (await run(db, USERS_BY_IDS, [companyId, ids])).map((r) => USERS.hydrate(r)) : [];
}

export async function insertUser(db: Db, user: User): Promise<void> {
  await run(db, INSERT_USER, USERS.values(user));
}

export async function updateUser(db: Db, user: User): Promise<void> {
  await run(db, UPDATE_USER, USERS.values(user));
}

/** A key of the company that is not deleted, locked until the transaction ends. */
export async function lockLiveKey(db: Db, companyId: string, id: string): Promise<IntegrationKey | null> {
  return first((await run(db, LIVE_KEY_LOCKED, [companyId, id])).map((r) => KEYS.hydrate(r)));
}

export async function insertKey(db: Db, key: IntegrationKey): Promise<void> {
  await run(db, INSERT_KEY, KEYS.values(key));
}

export async function updateKey(db: Db, key: IntegrationKey): Promise<void> {
  await run(db, UPDATE_KEY, KEYS.values(key));
}

export async function resolveKey(db: Db, keyHash: string): Promise<{ key: IntegrationKey; creator: User | null } | null> {
  const row = first(await run<Record<string, unknown> & { creator: Record<string, unknown> | null }>(db, RESOLVE_KEY, [keyHash]));
  if (!row) return null;
  const { creator, ...key } = row;
  return { key: KEYS.hydrate(key), creator: creator ? USERS.hydrate(creator) : null };
}
