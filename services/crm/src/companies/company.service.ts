import { createHash, randomBytes } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@svc/platform/db/orm';
import { conflict, invalidField, notFound, requireUuid } from '@svc/platform/errors';
import { v7 as uuidv7 } from 'uuid';
import type { z } from 'zod';
import { Company, IntegrationKey, User } from './company.entity.js';
import type {
  createCompanyBody,
  createKeyBody,
  createUserBody,
  updateCompanyBody,
  updateKeyBody,
  updateUserBody,
} from './company.schema.js';

export const KEY_PREFIX = 'svc_';
export const hashKey = (plain: string) => createHash('sha256').update(plain).digest('hex');
const toDate = (v: string | null | undefined) => (v ? new Date(v) : null);

export async function requireCompany(em: EntityManager, companyId: string): Promise<Company> {
  const company = await em.findOne(Company, { id: requireUuid(companyId, 'Company') });
  if (!company) throw notFound('Company');
  return company;
}

export async function requireUser(em: EntityManager, companyId: string, userId: string): Promise<User> {
  const user = await em.findOne(User, { id: requireUuid(userId, 'User'), companyId });
  if (!user) throw notFound('User');
  return user;
}

async function uniqueOr<T>(work: () => Promise<T>, message: string): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw conflict(message);
    throw err;
  }
}

export async function createCompany(em: EntityManager, body: z.infer<typeof createCompanyBody>) {
  return em.transactional(async (tx) => {
    const now = new Date();
    const company = tx.create(Company, {
      id: uuidv7(),
      name: body.name,
      planValidUntil: toDate(body.plan_valid_until),
      masterUserId: uuidv7(),
      createdAt: now,
    });
    const master = tx.create(User, {
      id: company.masterUserId,
      companyId: company.id,
      name: body.master_user.name,
      email: body.master_user.email,
      avatar: null,
      active: true,
      archived: false,
      createdAt: now,
    });
    await tx.flush();
    return { company, master };
  });
}

export async function updateCompany(em: EntityManager, companyId: string, body: z.infer<typeof updateCompanyBody>) {
  const company = await requireCompany(em, companyId);
  if (body.name !== undefined) company.name = body.name;
  if (body.plan_valid_until !== undefined) company.planValidUntil = toDate(body.plan_valid_until);
  await em.flush();
  return { company, master: await em.findOneOrFail(User, { id: company.masterUserId }) };
}

export async function createUser(em: EntityManager, companyId: string, body: z.infer<typeof createUserBody>) {
  await requireCompany(em, companyId);
  const user = em.create(User, {
    id: uuidv7(),
    companyId,
    name: body.name,
    email: body.email,
    avatar: body.avatar ?? null,
    active: true,
    archived: false,
    createdAt: new Date(),
  });
  await uniqueOr(() => em.flush(), 'email: a user with this e-mail already exists in the company');
  return user;
}

export async function updateUser(em: EntityManager, companyId: string, userId: string, body: z.infer<typeof updateUserBody>) {
  await requireCompany(em, companyId);
  const user = await requireUser(em, companyId, userId);
  if (body.active !== undefined) user.active = body.active;
  if (body.archived !== undefined) user.archived = body.archived;
  if (body.name !== undefined) user.name = body.name;
  await em.flush();
  return user;
}

export async function createKey(em: EntityManager, companyId: string, body: z.infer<typeof createKeyBody>) {
  await requireCompany(em, companyId);
  const creator = await em.findOne(User, { id: body.created_by_user_id, companyId });
  if (!creator) throw invalidField('created_by_user_id', 'no such user in the company');
  const plain = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const key = em.create(IntegrationKey, {
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
  });
  await em.flush();
  return { key, plain };
}

async function requireKey(em: EntityManager, companyId: string, keyId: string): Promise<IntegrationKey> {
  await requireCompany(em, companyId);
  const key = await em.findOne(IntegrationKey, { id: requireUuid(keyId, 'Key'), companyId, deletedAt: null });
  if (!key) throw notFound('Key');
  return key;
}

export async function updateKey(em: EntityManager, companyId: string, keyId: string, body: z.infer<typeof updateKeyBody>) {
  const key = await requireKey(em, companyId, keyId);
  if (body.active !== undefined) key.active = body.active;
  if (body.valid_until !== undefined) {
    if (body.valid_until && key.validFrom && Date.parse(body.valid_until) <= key.validFrom.getTime()) {
      throw invalidField('valid_until', 'must be after valid_from');
    }
    key.validUntil = toDate(body.valid_until);
  }
  if (body.permissions !== undefined) key.permissions = [...new Set(body.permissions)];
  if (body.rate_limit_per_minute !== undefined) key.rateLimitPerMinute = body.rate_limit_per_minute;
  await em.flush();
  return key;
}

export async function deleteKey(em: EntityManager, companyId: string, keyId: string) {
  const key = await requireKey(em, companyId, keyId);
  key.deletedAt = new Date();
  key.active = false;
  await em.flush();
  return key;
}
