import { inTransaction } from '@svc/platform/db/native';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { requireCompany } from '../companies/company.service.js';
import { CONTACT_TYPES, type Organization, type Person, type PersonContact } from './contact.entity.js';
import { insertOrganization, insertPerson } from './contact.store.js';

/** Contact types (ours, listed in the README): 1 e-mail, 2 phone (also WhatsApp), 3 website, 4 other. */
export { CONTACT_TYPES };

const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);
export const contactInput = z
  .strictObject({ type: z.number().int().min(1).max(4), value: z.string().trim().min(1, 'must not be empty').max(500) })
  .superRefine((c, ctx) => {
    if (c.type === CONTACT_TYPES.email && !z.email().safeParse(c.value).success) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: 'must be an e-mail address for type 1' });
    }
  });

export const createPersonBody = z.strictObject({
  name: text(200).min(1, 'must not be empty'),
  birth_date: z.iso.datetime({ offset: true }).or(z.iso.date()).nullable().optional(),
  gender: z.number().int().min(0).max(3).nullable().optional(),
  notes: text(10_000).nullable().optional(),
  contacts: z.array(contactInput).max(50).default([]),
});

export const createOrganizationBody = z.strictObject({
  name: text(200).min(1, 'must not be empty'),
  legal_name: text(200).nullable().optional(),
  document: text(100).nullable().optional(),
  industry: text(200).nullable().optional(),
  description: text(10_000).nullable().optional(),
  phone: text(100).nullable().optional(),
  email: z.email().max(320).nullable().optional(),
  site: text(500).nullable().optional(),
  logo: z.url().max(2000).nullable().optional(),
});

export const personView = (p: Person, contacts: PersonContact[]) => ({
  id: p.id,
  name: p.name,
  birth_date: p.birthDate ? p.birthDate.toISOString() : null,
  gender: p.gender,
  notes: p.notes,
  contacts: contacts.map((c) => ({ id: c.id, type: c.type, value: c.value, primary: c.primary })),
});

export async function createPerson(pool: Pool, companyId: string, body: z.infer<typeof createPersonBody>) {
  await requireCompany(pool, companyId);
  const person: Person = {
    id: uuidv7(),
    companyId,
    name: body.name,
    birthDate: body.birth_date ? new Date(body.birth_date) : null,
    gender: body.gender ?? null,
    notes: body.notes ?? null,
    createdAt: new Date(),
  };
  const seenTypes = new Set<number>();
  const contacts = body.contacts.map((c) => {
    const primary = !seenTypes.has(c.type);
    seenTypes.add(c.type);
    const contact: PersonContact = { id: uuidv7(), companyId, personId: person.id, type: c.type, value: c.value, primary };
    return contact;
  });
  await inTransaction(pool, (tx) => insertPerson(tx, person, contacts));
  return personView(person, contacts);
}

export const organizationView = (o: Organization) => ({
  id: o.id,
  name: o.name,
  legal_name: o.legalName,
  document: o.document,
  industry: o.industry,
  description: o.description,
  phone: o.phone,
  email: o.email,
  site: o.site,
  logo: o.logo,
});

export async function createOrganization(pool: Pool, companyId: string, body: z.infer<typeof createOrganizationBody>) {
  await requireCompany(pool, companyId);
  const org: Organization = {
    id: uuidv7(),
    companyId,
    name: body.name,
    legalName: body.legal_name ?? null,
    document: body.document ?? null,
    industry: body.industry ?? null,
    description: body.description ?? null,
    phone: body.phone ?? null,
    email: body.email ?? null,
    site: body.site ?? null,
    logo: body.logo ?? null,
    createdAt: new Date(),
  };
  await insertOrganization(pool, org);
  return organizationView(org);
}
