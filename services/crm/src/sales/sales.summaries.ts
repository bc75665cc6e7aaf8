/** Element shapes the spec leaves open, defined once for details, PUT answers and events: a change here changes docs/webhooks/lead-events.md. */

import { iso } from '@svc/platform/http/json';
import type { CustomField, CustomFieldOption, CustomFieldValue, NamedItem, Tag } from '../catalog/catalog.entity.js';
import { CUSTOM_FIELD_TYPES } from '../catalog/catalog.service.js';
import type { User } from '../companies/company.entity.js';
import type { Organization, Person, PersonContact } from '../contacts/contact.entity.js';
import type { Pipeline, Stage } from '../pipelines/pipeline.entity.js';
import type { SalesFollower, SalesParticipant, SalesRecord } from './sales.entity.js';

export interface UserSummary {
  id: string;
  name: string;
  avatar: string | null;
}
export const userSummary = (u: User | undefined | null): UserSummary | null =>
  u ? { id: u.id, name: u.name, avatar: u.avatar ?? null } : null;

export interface StageSummary {
  id: string;
  name: string;
  pipeline: { id: string; name: string } | null;
}
export const stageSummary = (s: Stage | undefined | null, p: Pipeline | undefined | null): StageSummary | null =>
  s ? { id: s.id, name: s.name, pipeline: p ? { id: p.id, name: p.name } : null } : null;

/** TagSummary: `{id, name, color: {background, foreground}}`; the colors are null when the tag has none. */
export interface TagSummary {
  id: string;
  name: string;
  color: { background: string | null; foreground: string | null };
}
export const tagSummary = (t: Tag): TagSummary => ({
  id: t.id,
  name: t.name,
  color: { background: t.colorBackground ?? null, foreground: t.colorForeground ?? null },
});

/** LossReasonSummary (and GainReasonSummary, FollowerRoleSummary): `{id, name}`. */
export interface NamedSummary {
  id: string;
  name: string;
}
export const namedSummary = (n: NamedItem): NamedSummary => ({ id: n.id, name: n.name });

export const organizationSummary = (o: Organization | null | undefined) => (o ? { id: o.id, name: o.name, logo: o.logo ?? null } : null);

export interface ParticipantRelation {
  participant: SalesParticipant;
  person: Person;
  contacts: PersonContact[];
}
export const participantSummary = ({ participant, person, contacts }: ParticipantRelation) => ({
  id: participant.id,
  main: participant.main,
  role: participant.role ?? null,
  notes: participant.notes ?? null,
  person: {
    id: person.id,
    name: person.name,
    contacts: contacts.map((c) => ({ id: c.id, type: c.type, value: c.value, primary: c.primary })),
  },
});

export interface FollowerRelation {
  follower: SalesFollower;
  user: User;
  role: NamedItem | null;
}
export const followerSummary = ({ follower, user, role }: FollowerRelation) => ({
  role: role ? namedSummary(role) : null,
  user: userSummary(user),
  notes: follower.notes ?? null,
});

/** One answer of a custom field: `{id, option_id, option_value, value}` (option_* null for text, number and date). */
export interface CustomFieldAnswer {
  id: string;
  option_id: string | null;
  option_value: string | null;
  value: string | null;
}

export interface CustomFieldWithAnswers {
  field_id: string;
  field_name: string;
  field_type: number;
  answers: CustomFieldAnswer[];
}

/** CustomFieldChange: a field whose answers were created or changed, with the answers before (empty when new). */
export interface CustomFieldChange extends CustomFieldWithAnswers {
  previous_answers: CustomFieldAnswer[];
}

/** RemovedCustomField: a field whose answers were removed, with what it held. */
export interface RemovedCustomField {
  field_id: string;
  field_name: string;
  field_type: number;
  previous_answers: CustomFieldAnswer[];
}

export interface CustomFieldRelation {
  field: CustomField;
  value: CustomFieldValue;
  option: CustomFieldOption | null;
}

export const fieldType = (f: Pick<CustomField, 'type'>): number => CUSTOM_FIELD_TYPES[f.type as keyof typeof CUSTOM_FIELD_TYPES] ?? 0;

export const answerOf = (r: Pick<CustomFieldRelation, 'value' | 'option'>): CustomFieldAnswer => ({
  id: r.value.id,
  option_id: r.value.optionId ?? null,
  option_value: r.option?.value ?? null,
  value: r.value.value ?? null,
});

/** Answers grouped by field, fields in their creation order, answers in option order (else creation order). */
export function customFieldsWithAnswers(rows: CustomFieldRelation[]): CustomFieldWithAnswers[] {
  const byField = new Map<string, { field: CustomField; rows: CustomFieldRelation[] }>();
  for (const row of rows) {
    const entry = byField.get(row.field.id) ?? { field: row.field, rows: [] };
    entry.rows.push(row);
    byField.set(row.field.id, entry);
  }
  return [...byField.values()]
    .sort((a, b) => a.field.createdAt.getTime() - b.field.createdAt.getTime() || a.field.id.localeCompare(b.field.id))
    .map(({ field, rows: answers }) => ({
      field_id: field.id,
      field_name: field.name,
      field_type: fieldType(field),
      answers: answers
        .sort((a, b) => (a.option?.position ?? 0) - (b.option?.position ?? 0) || a.value.id.localeCompare(b.value.id))
        .map(answerOf),
    }));
}

export interface DealOfLead {
  deal: SalesRecord;
  stage: Stage | null;
  pipeline: Pipeline | null;
  responsible: User | null;
}
export const dealSummary = ({ deal, stage, pipeline, responsible }: DealOfLead) => ({
  id: deal.id,
  code: deal.code,
  title: deal.title,
  status: deal.status,
  archived_at: iso(deal.archivedAt),
  won_date: iso(deal.wonDate),
  lost_date: iso(deal.lostDate),
  created_at: deal.createdAt.toISOString(),
  updated_at: deal.updatedAt.toISOString(),
  stage: stageSummary(stage, pipeline),
  value: deal.value ?? null,
  responsible: userSummary(responsible),
});

export function stageDuration(stage: { id: string; name: string }, totalSeconds: number) {
  const s = Math.max(0, Math.floor(totalSeconds));
  const parts: string[] = [];
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) parts.push(`${d}d`);
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}m`);
  if (!parts.length) parts.push(`${s % 60}s`);
  return { stage_id: stage.id, stage_name: stage.name, total_seconds: s, human_readable: parts.join(' ') };
}
