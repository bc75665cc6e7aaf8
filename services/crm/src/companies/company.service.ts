import { createHash, randomBytes } from 'node:crypto';
import { inTransaction } from '@svc/platform/db/native';
import { invalidField, notFound, requireUuid } from '@svc/platform/errors';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { z } from 'zod';
import { conflictOnUnique, type Db } from '../db.js';
import type { Company, IntegrationKey, User } from './company.entity.js';
import type {
  createCompanyBody,
  createKeyBody,
  createUserBody,
  updateCompanyBody,
  updateKeyBody,
  updateUserBody,
} from './company.schema.js';
import * as store from './company.store.js';

export const KEY_PREFIX = 'svc_';
export const hashKey = (plain: string) => createHash('sha256').update(plain).digest('hex');
const toDate = (v: string | null | undefined) => (v ? new Date(v) : null);

export async function requireCompany(db: Db, companyId: string, lock = false): Promise<Company> {
  const company = await store.findCompany(db, requireUuid(companyId, 'Company'), lock);
  if (!company) throw notFound('Company');
  return company;
}

export async function requireUser(db: Db, companyId: string, userId: string, lock = false): Promise<User> {
  const user = await store.findUser(db, companyId, requireUuid(userId, 'User'), lock);
  if (!user) throw notFound('User');
  return user;
}

/** A company's master user: always there, it is created with the company. */
async function masterOf(db: Db, company: Company): Promise<User> {
  const master = await store.findUser(db, company.id, company.masterUserId);
  if (!master) throw new Error(`company ${company.id} has no master user`);
  return master;
}

export async function createCompany(pool: Pool, body: z.infer<typeof createCompanyBody>) {
  const now = new Date();
  const company: Company = {
    id: uuidv7(),
    name: body.name,
    planValidUntil: toDate(body.plan_valid_until),
    masterUserId: uuidv7(),
    createdAt: now,
  };
  const master: User = {
    id: company.masterUserId,
    companyId: company.id,
    name: body.master_user.name,
    email: body.master_user.email,
    avatar: null,
    active: true,
    archived: false,
    createdAt: now,
  };
  await inTransaction(pool, async (tx) => {
    await store.insertCompany(tx, company);
    await store.insertUser(tx, master);
  });
  return { company, master };
}

export async function getCompany(pool: Pool, companyId: string) {
  const company = await requireCompany(pool, companyId);
  return { company, master: await requireUser(pool, company.id, company.masterUserId) };
}

export async function updateCompany(pool: Pool, companyId: string, body: z.infer<typeof updateCompanyBody>) {
  return inTransaction(pool, async (tx) => {
    const company = await requireCompany(tx, companyId, true);
    if (body.name !== undefined) company.name = body.name;
    if (body.plan_valid_until !== undefined) company.planValidUntil = toDate(body.plan_valid_until);
    await store.updateCompany(tx, company);
    return { company, master: await masterOf(tx, company) };
  });
}

export async function createUser(pool: Pool, companyId: string, body: z.infer<typeof createUserBody>) {
  await requireCompany(pool, companyId);
  const user: User = {
    id: uuidv7(),
    companyId,
    name: body.name,
    email: body.email,
    avatar: body.avatar ?? null,
    active: true,
    archived: false,
    createdAt: new Date(),
  };
  await conflictOnUnique(() => store.insertUser(pool, user), 'email: a user with this e-mail already exists in the company');
  return user;
}

export async function updateUser(pool: Pool, companyId: string, userId: string, body: z.infer<typeof updateUserBody>) {
  await requireCompany(pool, companyId);
  return inTransaction(pool, async (tx) => {
    const user = await requireUser(tx, companyId, userId, true);
    if (body.active !== undefined) user.active = body.active;
    if (body.archived !== undefined) user.archived = body.archived;
    if (body.name !== undefined) user.name = body.name;
    await store.updateUser(tx, user);
    return user;
  });
}

export async function createKey(pool: Pool, companyId: string, body: z.infer<typeof createKeyBody>) {
  await requireCompany(pool, companyId);
  const creator = await store.findUser(pool, companyId, body.created_by_user_id);
  if (!creator) throw invalidField('created_by_user_id', 'no such user in the company');
  const plain = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const key: IntegrationKey = {
    id: uuidv7(),
    companyId,
    createdByUserId: creator.id,
    keyHash: hashKey(plain),
    permissions: [...new Set(body.permissions)],
    allowedDomain: body.allowed_domain ?? null,
    validFrom: toDate(body.valid_from),
    validUntil: toDate(body.valid_until),
    active: true,
    rateLimitPerMinute: body.rate_limit_per_minute ?? null,
    deletedAt: null,
    createdAt: new Date(),
  };
  await store.insertKey(pool, key);
  return { key, plain };
}

/** Changes the company's live key `keyId` (404 when there is none), in one transaction with the key locked. */
async function changeKey(pool: Pool, companyId: string, keyId: string, change: (key: IntegrationKey) => void): Promise<IntegrationKey> {
  await requireCompany(pool, companyId);
  return inTransaction(pool, async (tx) => {
    const key = await store.lockLiveKey(tx, companyId, requireUuid(keyId, 'Key'));
    if (!key) throw notFound('Key');
    change(key);
    await store.updateKey(tx, key);
    return key;
  });
}

export function updateKey(pool: Pool, companyId: string, keyId: string, body: z.infer<typeof updateKeyBody>) {
  return changeKey(pool, companyId, keyId, (key) => {
    if (body.active !== undefined) key.active = body.active;
    if (body.valid_until !== undefined) {
      if (body.valid_until && key.validFrom && Date.parse(body.valid_until) <= key.validFrom.getTime()) {
        throw invalidField('valid_until', 'must be after valid_from');
      }
      key.validUntil = toDate(body.valid_until);
    }
    if (body.permissions !== undefined) key.permissions = [...new Set(body.permissions)];
    if (body.rate_limit_per_minute !== undefined) key.rateLimitPerMinute = body.rate_limit_per_minute;
  });
}

export function deleteKey(pool: Pool, companyId: string, keyId: string) {
  return changeKey(pool, companyId, keyId, (key) => {
    key.deletedAt = new Date();
    key.active = false;
  });
}
