import { defineEntity, type InferEntity, type InferEntityFromProperties, p } from '@mikro-orm/core';

export type SalesKind = 'lead' | 'deal';

export const SalesStatus = { open: 1, won: 2, lost: 3 } as const;

/** One definition for both tables so snapshots cannot drift; a function so each entity gets its own builders. */
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
  /** Unique per company among live records (decision 0180). */
  externalId: p.string().length(255).nullable(),
});

/** A partial index, which MikroORM's `uniques` cannot express (decision 0180). */
export const externalIdIndex = (kind: SalesKind) => ({
  name: `${kind}s_company_external_id_unique`,
  expression: (_columns: unknown, table: { qualifiedName: string }, name: string) =>
    `create unique index "${name}" on ${table.qualifiedName} (company_id, external_id) where external_id is not null and archived_at is null`,
});

const entityName = { lead: 'Lead', deal: 'Deal' } as const;

export const reasonProperties = (kind: SalesKind) => ({
  recordId: p
    .uuid()
    .fieldName(`${kind}_id` as string)
    .primary(),
  reasonId: p.uuid().primary(),
  companyId: p.uuid(),
  position: p.integer(),
});

/** One definition for both kinds (decision 0051). No foreign keys: a creation writes them before the record. */
export function salesRelationEntities(kind: SalesKind) {
  const name: string = entityName[kind];
  const table = (suffix: string): string => `${kind}_${suffix}`;
  const recordId = () => p.uuid().fieldName(table('id'));
  return {
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
    /** `main` is the main contact. */
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
    /** The first is `crm_loss_reason`. */
    LossReason: defineEntity({ name: `${name}LossReason`, tableName: table('loss_reasons'), properties: reasonProperties(kind) }),
    /** One period per stay; the current one is open (left_at null). */
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

export const SALES_RECORD_PROPERTIES = Object.keys(salesRecordProperties());

export type SalesRecord = Omit<InferEntityFromProperties<ReturnType<typeof salesRecordProperties>>, symbol>;
