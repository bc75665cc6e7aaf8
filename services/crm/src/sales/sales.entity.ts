import { defineEntity, type InferEntity, type InferEntityFromProperties, p } from '@mikro-orm/core';

/** Leads and deals: the two kinds of sales record. Each has its own table and relation tables named after it. */
export type SalesKind = 'lead' | 'deal';

/** A lead's or deal's `status`. */
export const SalesStatus = { open: 1, won: 2, lost: 3 } as const;

/**
 * The columns a lead and a deal share (a deal adds its own, deal.entity.ts): one definition, so both tables and
 * the snapshots built from them cannot drift. A function, so each entity gets its own property builders.
 */
export const salesRecordProperties = () => ({
  id: p.uuid().primary(),
  companyId: p.uuid(),
  code: p.integer(),
  title: p.string().length(150),
  pipelineId: p.uuid(),
  stageId: p.uuid(),
  responsibleId: p.uuid(),
  createdById: p.uuid(),
  status: p.smallint(),
  visibility: p.smallint(),
  measurementConsent: p.string().length(20).nullable(),
  qualityRating: p.smallint().nullable(),
  qualityReason: p.text().nullable(),
  value: p.decimal('number').precision(14).scale(2).nullable(),
  leadSourceId: p.uuid().nullable(),
  organizationId: p.uuid().nullable(),
  createdAt: p.datetime(),
  updatedAt: p.datetime(),
  archivedAt: p.datetime().nullable(),
  wonDate: p.datetime().nullable(),
  lostDate: p.datetime().nullable(),
  lastActivityAt: p.datetime().nullable(),
  lostReasonDescription: p.text().nullable(),
  /** The integrator's own id (decision 0180): unique per company among live records, `ext:<id>` as a ref. */
  externalId: p.string().length(255).nullable(),
});

/**
 * The unique index of a kind's external ids among live (not archived) records (decision 0180): a partial index,
 * which MikroORM's `uniques` cannot express.
 */
export const externalIdIndex = (kind: SalesKind) => ({
  name: `${kind}s_company_external_id_unique`,
  expression: (_columns: unknown, table: { qualifiedName: string }, name: string) =>
    `create unique index "${name}" on ${table.qualifiedName} (company_id, external_id) where external_id is not null and archived_at is null`,
});

const entityName = { lead: 'Lead', deal: 'Deal' } as const;

/** The reasons of a closed record (named_items), in the order given: `<kind>_loss_reasons`, `deal_gain_reasons`. */
export const reasonProperties = (kind: SalesKind) => ({
  recordId: p
    .uuid()
    .fieldName(`${kind}_id` as string)
    .primary(),
  reasonId: p.uuid().primary(),
  companyId: p.uuid(),
  position: p.integer(),
});

/**
 * The relation tables of one kind of sales record (`lead_tags`, `deal_tags`, ...), from one definition: the same
 * columns, with the record named by `<kind>_id` (property `recordId`), so the code that reads and writes them is
 * shared (decision 0051). No foreign keys: a creation writes them before the record, in its transaction.
 * Custom field answers need no table per kind: `custom_field_values.record_id`, the field names its entity.
 */
export function salesRelationEntities(kind: SalesKind) {
  const name: string = entityName[kind];
  const table = (suffix: string): string => `${kind}_${suffix}`;
  const recordId = () => p.uuid().fieldName(table('id'));
  return {
    /** The tags of a record. */
    Tag: defineEntity({
      name: `${name}Tag`,
      tableName: table('tags'),
      properties: {
        recordId: recordId().primary(),
        tagId: p.uuid().primary(),
        companyId: p.uuid(),
        createdAt: p.datetime(),
      },
      indexes: [{ name: `${kind}_tags_company_tag_idx`, properties: ['companyId', 'tagId'] }],
    }),
    /** The persons of a record (`participants`); `main` is its main contact. */
    Participant: defineEntity({
      name: `${name}Participant`,
      tableName: table('participants'),
      properties: {
        id: p.uuid().primary(),
        companyId: p.uuid(),
        recordId: recordId(),
        personId: p.uuid(),
        main: p.boolean(),
        role: p.string().length(200).nullable(),
        notes: p.text().nullable(),
        createdAt: p.datetime(),
      },
      uniques: [{ name: `${kind}_participants_${kind}_person_unique`, properties: ['recordId', 'personId'] }],
      indexes: [{ name: `${kind}_participants_company_person_idx`, properties: ['companyId', 'personId'] }],
    }),
    /** Users following a record, each at most once, with an optional follower role (named_items kind follower_role). */
    Follower: defineEntity({
      name: `${name}Follower`,
      tableName: table('followers'),
      properties: {
        id: p.uuid().primary(),
        companyId: p.uuid(),
        recordId: recordId(),
        userId: p.uuid(),
        roleId: p.uuid().nullable(),
        notes: p.text().nullable(),
        createdAt: p.datetime(),
      },
      uniques: [{ name: `${kind}_followers_${kind}_user_unique`, properties: ['recordId', 'userId'] }],
    }),
    /** Notes: the creation's `note` and the automatic ones (a responsible handed over to the master user). */
    Note: defineEntity({
      name: `${name}Note`,
      tableName: table('notes'),
      properties: {
        id: p.uuid().primary(),
        companyId: p.uuid(),
        recordId: recordId().index(),
        content: p.text(),
        isPinned: p.boolean(),
        automatic: p.boolean(),
        createdById: p.uuid().nullable(),
        createdAt: p.datetime(),
      },
    }),
    /** The loss reasons of a lost record, in the order given (the first is `crm_loss_reason`). */
    LossReason: defineEntity({ name: `${name}LossReason`, tableName: table('loss_reasons'), properties: reasonProperties(kind) }),
    /** The time a record spent in each stage: one period per stay, open (left_at null) in its current stage. */
    StagePeriod: defineEntity({
      name: `${name}StagePeriod`,
      tableName: table('stage_periods'),
      properties: {
        id: p.uuid().primary(),
        companyId: p.uuid(),
        recordId: recordId().index(),
        stageId: p.uuid(),
        enteredAt: p.datetime(),
        leftAt: p.datetime().nullable(),
      },
    }),
  };
}

export type SalesRelationEntities = ReturnType<typeof salesRelationEntities>;
type Relations = SalesRelationEntities;
export type SalesTag = InferEntity<Relations['Tag']>;
export type SalesParticipant = InferEntity<Relations['Participant']>;
export type SalesFollower = InferEntity<Relations['Follower']>;
export type SalesNote = InferEntity<Relations['Note']>;
export type SalesLossReason = InferEntity<Relations['LossReason']>;
export type SalesStagePeriod = InferEntity<Relations['StagePeriod']>;

/** The names of the properties a lead and a deal share. */
export const SALES_RECORD_PROPERTIES = Object.keys(salesRecordProperties());

/** The columns a lead and a deal share (salesRecordProperties), as a record's runtime type. */
export type SalesRecord = Omit<InferEntityFromProperties<ReturnType<typeof salesRecordProperties>>, symbol>;
