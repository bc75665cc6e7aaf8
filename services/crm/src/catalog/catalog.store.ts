import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Db } from '../db.js';
import { CustomField, CustomFieldOption, LeadSource, NamedItem, Tag, Tracker } from './catalog.entity.js';

/** The company's reference data: tags, custom fields and their options, lead sources, trackers and named items. */

const TAGS = tableOf(Tag);
const FIELDS = tableOf(CustomField);
const OPTIONS = tableOf(CustomFieldOption);
const SOURCES = tableOf(LeadSource);
const TRACKERS = tableOf(Tracker);
const ITEMS = tableOf(NamedItem);

const INSERT_TAG = statement('crm_tag_insert', TAGS.insert());
const INSERT_FIELD = statement('crm_custom_field_insert', FIELDS.insert());
const INSERT_OPTION = statement('crm_custom_field_option_insert', OPTIONS.insert());
const INSERT_SOURCE = statement('crm_lead_source_insert', SOURCES.insert());
const INSERT_TRACKER = statement('crm_tracker_insert', TRACKERS.insert());
const INSERT_ITEM = statement('crm_named_item_insert', ITEMS.insert());

const FIELDS_WHERE = `f.company_id = $1 and ($2::text is null or f.entity = $2)`;
/** A page of fields in creation order; after the cursor's `(created_at, id)` when one is given. */
const FIELD_PAGE = statement(
  'crm_custom_fields_page',
  `select ${FIELDS.select('f')} from custom_fields f where ${FIELDS_WHERE}
     and ($3::timestamptz is null or f.created_at > $3 or (f.created_at = $3 and f.id > $4::uuid))
   order by f.created_at, f.id offset $5 limit $6`,
);
const FIELD_COUNT = statement('crm_custom_fields_count', `select count(*)::int as n from custom_fields f where ${FIELDS_WHERE}`);
const OPTIONS_OF = statement(
  'crm_custom_field_options_of',
  `select ${OPTIONS.select('o')} from custom_field_options o where o.company_id = $1 and o.field_id = any($2::uuid[]) order by o.position`,
);

const SOURCE = statement(
  'crm_lead_source_by_id',
  `select ${SOURCES.select('s')} from lead_sources s where s.company_id = $1 and s.id = $2`,
);
/** The oldest of the company's lead sources of this name, compared without letter case (`$2` is a LIKE pattern). */
const SOURCE_BY_NAME = statement(
  'crm_lead_source_by_name',
  `select ${SOURCES.select('s')} from lead_sources s where s.company_id = $1 and s.name ilike $2 order by s.id limit 1`,
);
const ACTIVE_TRACKER = statement(
  'crm_tracker_active_by_code',
  `select ${TRACKERS.select('t')} from trackers t where t.company_id = $1 and t.code = $2 and t.active limit 1`,
);
const ITEMS_OF_KIND = statement(
  'crm_named_items_of_kind',
  `select ${ITEMS.select('i')} from named_items i where i.company_id = $1 and i.kind = $2 order by i.id`,
);
const ITEM_BY_NAME = statement(
  'crm_named_item_by_name',
  `select ${ITEMS.select('i')} from named_items i where i.company_id = $1 and i.kind = $2 and i.name ilike $3 order by i.id limit 1`,
);
const LOCK = statement('crm_catalog_lock_name', 'select pg_advisory_xact_lock(hashtext($1))');

export async function insertTag(db: Db, tag: Tag): Promise<void> {
  await run(db, INSERT_TAG, TAGS.values(tag));
}

export async function insertCustomField(db: Db, field: CustomField, options: CustomFieldOption[]): Promise<void> {
  await run(db, INSERT_FIELD, FIELDS.values(field));
  for (const o of options) await run(db, INSERT_OPTION, OPTIONS.values(o));
}

export interface FieldPage {
  entity: string | null;
  after: { at: Date; id: string } | null;
  offset: number;
  limit: number;
}

export async function customFieldPage(db: Db, companyId: string, page: FieldPage): Promise<CustomField[]> {
  const rows = await run(db, FIELD_PAGE, [companyId, page.entity, page.after?.at ?? null, page.after?.id ?? null, page.offset, page.limit]);
  return rows.map((r) => FIELDS.hydrate(r));
}

export async function countCustomFields(db: Db, companyId: string, entity: string | null): Promise<number> {
  const [row] = await run<{ n: number }>(db, FIELD_COUNT, [companyId, entity]);
  return row?.n ?? 0;
}

export async function optionsOf(db: Db, companyId: string, fieldIds: string[]): Promise<CustomFieldOption[]> {
  return fieldIds.length ? (await run(db, OPTIONS_OF, [companyId, fieldIds])).map((r) => OPTIONS.hydrate(r)) : [];
}

export async function insertLeadSource(db: Db, source: LeadSource): Promise<void> {
  await run(db, INSERT_SOURCE, SOURCES.values(source));
}

export async function findLeadSource(db: Db, companyId: string, id: string): Promise<LeadSource | null> {
  const [row] = await run(db, SOURCE, [companyId, id]);
  return row ? SOURCES.hydrate(row) : null;
}

export async function leadSourceNamed(db: Db, companyId: string, likePattern: string): Promise<LeadSource | null> {
  const [row] = await run(db, SOURCE_BY_NAME, [companyId, likePattern]);
  return row ? SOURCES.hydrate(row) : null;
}

export async function insertTracker(db: Db, tracker: Tracker): Promise<void> {
  await run(db, INSERT_TRACKER, TRACKERS.values(tracker));
}

export async function activeTracker(db: Db, companyId: string, code: string): Promise<Tracker | null> {
  const [row] = await run(db, ACTIVE_TRACKER, [companyId, code]);
  return row ? TRACKERS.hydrate(row) : null;
}

export async function insertNamedItem(db: Db, item: NamedItem): Promise<void> {
  await run(db, INSERT_ITEM, ITEMS.values(item));
}

export async function namedItems(db: Db, companyId: string, kind: string): Promise<NamedItem[]> {
  return (await run(db, ITEMS_OF_KIND, [companyId, kind])).map((r) => ITEMS.hydrate(r));
}

export async function namedItemNamed(db: Db, companyId: string, kind: string, likePattern: string): Promise<NamedItem | null> {
  const [row] = await run(db, ITEM_BY_NAME, [companyId, kind, likePattern]);
  return row ? ITEMS.hydrate(row) : null;
}

/** A transaction lock on a name, so that concurrent find-or-creates of it share one row. */
export async function lockName(db: Db, key: string): Promise<void> {
  await run(db, LOCK, [key]);
}
