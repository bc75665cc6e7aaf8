/**
 * What bench:leads creates and reads: the company's lead references (custom fields, tags, persons, an
 * organization, users with a follower role), the POST /leads bodies of phase (a) and the richly populated lead
 * of phase (b).
 */
import { randomUUID } from 'node:crypto';
import { AdminClient } from '../../scripts/demo.js';
import { adminQuery } from '../lib/infra.js';
import type { Seeded } from '../lib/seed.js';

export interface LeadReferences {
  /** A required select field and its first option. */
  segment: { id: string; optionId: string };
  /** An optional number field. */
  budget: string;
  /** An optional text field and an optional multiselect with its options (the rich lead only). */
  remarks: string;
  channels: { id: string; optionIds: string[] };
  tags: string[];
  persons: string[];
  organization: string;
  followers: string[];
  followerRole: string;
}

const EMAIL = 1;
const PHONE = 2;

export async function seedLeadReferences(gatewayUrl: string, adminToken: string, s: Seeded): Promise<LeadReferences> {
  const admin = new AdminClient(gatewayUrl, adminToken);
  const base = `/companies/${s.companyId}`;
  type Field = { id: string; options: { id: string }[] };
  const segment = await admin.create<Field>(`${base}/custom-fields`, {
    entity: 'lead',
    name: 'Segment',
    type: 'select',
    required: true,
    options: ['SMB', 'Mid-market', 'Enterprise'],
  });
  const budget = await admin.create<Field>(`${base}/custom-fields`, { entity: 'lead', name: 'Budget', type: 'number' });
  const remarks = await admin.create<Field>(`${base}/custom-fields`, { entity: 'lead', name: 'Remarks', type: 'text' });
  const channels = await admin.create<Field>(`${base}/custom-fields`, {
    entity: 'lead',
    name: 'Channels',
    type: 'multiselect',
    options: ['E-mail', 'Phone', 'WhatsApp', 'Visit'],
  });
  const tags = [];
  for (const name of ['Hot', 'Inbound', 'Q4 pipeline']) tags.push((await admin.create(`${base}/tags`, { name })).id);
  const persons = [];
  for (const [name, n] of [
    ['Marta Ribeiro', 1],
    ['Otávio Nunes', 2],
  ] as const) {
    persons.push(
      (
        await admin.create(`${base}/persons`, {
          name,
          contacts: [
            { type: EMAIL, value: `person${n}@customer.example.com` },
            { type: PHONE, value: `+55 11 90000-000${n}` },
          ],
        })
      ).id,
    );
  }
  const organization = (await admin.create(`${base}/organizations`, { name: 'Customer Ltda', site: 'https://customer.example.com' })).id;
  const followers = [];
  for (const n of [1, 2]) {
    followers.push((await admin.create(`${base}/users`, { name: `Follower ${n}`, email: `follower${n}@bench.example.com` })).id);
  }
  const followerRole = (await admin.create(`${base}/follower-roles`, { name: 'Sponsor' })).id;
  return {
    segment: { id: segment.id, optionId: segment.options[0]!.id },
    budget: budget.id,
    remarks: remarks.id,
    channels: { id: channels.id, optionIds: channels.options.slice(0, 2).map((o) => o.id) },
    tags,
    persons,
    organization,
    followers,
    followerRole,
  };
}

/** A paid-search landing: utm parameters, a gclid and the consent in the URL, the consent also in the body. */
const marketing = {
  url_conversion:
    'https://shop.example.com/landing?utm_source=google&utm_medium=cpc&utm_campaign=spring-sale&utm_content=hero-banner' +
    '&utm_term=crm+software&gclid=Cj0KCQiA-bench&measurement_consent=GRANTED',
  measurement_consent: 'GRANTED',
};

/** The person of phase (a): deduplicated by e-mail or phone. */
export const DEDUP_EMAIL = 'ana.lima@customer.example.com';

/** A Person object with an e-mail and a phone, deduplicated by e-mail. */
const personOf = (email: string) => ({
  name: 'Ana Lima',
  contacts: [
    { type: EMAIL, value: email },
    // The deduplicated person's phone is always the same; a new person's second contact is its own (a site named
    // after its e-mail, which the pgbench replay renews with the ids): locks are per contact (decision 0047).
    email === DEDUP_EMAIL ? { type: PHONE, value: '+55 21 98888-7777' } : { type: 3, value: `https://${email.replace('@', '.')}` },
  ],
  avoid_duplicate: true,
  duplicate_check_types: [EMAIL],
});

/**
 * POST /leads of phase (a): a person (`avoid_duplicate` by e-mail and phone), the required select and the number
 * field, the marketing object. `email` is the person's e-mail: the same every time (the person is found and
 * reused) or a new one every time (the search misses and a person is created).
 */
export function creationBody(refs: LeadReferences, email: string): Record<string, unknown> {
  return {
    title: 'Bench lead with a person',
    person: personOf(email),
    custom_fields: [
      { id: refs.segment.id, option_id: refs.segment.optionId },
      { id: refs.budget, value: '15000.50' },
    ],
    marketing,
  };
}

/** A new e-mail address; `id` is a UUIDv7 when the capture must see it as made by the call. */
export const newEmail = (id: string = randomUUID()) => `new-${id}@customer.example.com`;

/**
 * The lead of phase (b): three tags, three persons (two of the company's and one deduplicated by e-mail), the
 * organization, four custom fields (five answers), two followers with a role, a note, a marketing acquisition;
 * then two more notes (written in the table: the API takes one note per creation).
 */
export async function createRichLead(gatewayUrl: string, key: string, refs: LeadReferences, database: string): Promise<string> {
  const res = await fetch(`${gatewayUrl}/integrations/external/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      title: 'Bench rich lead: Customer Ltda expansion',
      visibility: 1,
      quality_rating: 4,
      quality_reason: 'Budget approved, decision in Q4',
      tags: refs.tags,
      persons_id: refs.persons,
      person: personOf(DEDUP_EMAIL),
      organization_id: refs.organization,
      custom_fields: [
        { id: refs.segment.id, option_id: refs.segment.optionId },
        { id: refs.budget, value: '250000' },
        { id: refs.remarks, value: 'Wants a pilot with two teams before the rollout.' },
        { id: refs.channels.id, option_ids: refs.channels.optionIds },
      ],
      marketing,
      followers: refs.followers.map((user_id) => ({ user_id, role_id: refs.followerRole })),
      note: { content: 'First call done; sending the proposal next week.', is_pinned: true },
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST rich lead: ${res.status} ${text.slice(0, 300)}`);
  const { id } = JSON.parse(text) as { id: string };
  await adminQuery(
    `insert into crm.lead_notes (id, company_id, lead_id, content, is_pinned, automatic, created_by_id, created_at)
     select gen_random_uuid(), l.company_id, l.id, n.content, false, false, l.created_by_id, now()
     from crm.leads l, (values ('Proposal sent.'), ('Follow-up scheduled with procurement.')) n(content) where l.id = '${id}'`,
    database,
  );
  return id;
}
