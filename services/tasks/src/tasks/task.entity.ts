import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/**
 * Links to crm's records are ids checked over gRPC, never foreign keys. Tags, reminders and participants are arrays
 * on the row: a task is written and read in one statement.
 */
export const Task = defineEntity({
  name: 'Task',
  tableName: 'tasks',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    title: p.string().length(100),
    /** Sanitized HTML. */
    description: p.text().nullable(),
    isPersonal: p.boolean(),
    priority: p.smallint(),
    taskTypeId: p.uuid(),
    taskStageId: p.uuid(),
    crmLeadId: p.uuid().nullable(),
    crmDealId: p.uuid().nullable(),
    crmDeliveryId: p.uuid().nullable(),
    crmPersonId: p.uuid().nullable(),
    crmOrganizationId: p.uuid().nullable(),
    crmCustomerId: p.uuid().nullable(),
    responsibleId: p.uuid(),
    createdById: p.uuid(),
    completedAt: p.datetime().nullable(),
    completedById: p.uuid().nullable(),
    startDate: p.datetime().nullable(),
    endDate: p.datetime().nullable(),
    hasTime: p.boolean(),
    meetingOutcome: p.smallint().nullable(),
    meetingOutcomeNotes: p.text().nullable(),
    meetingProvider: p.string().length(40).nullable(),
    meetingMode: p.string().length(20).nullable(),
    meetingLocation: p.string().length(500).nullable(),
    /** Sanitized HTML. */
    meetingDescription: p.text().nullable(),
    meetingParticipants: p.array().columnType('text[]'),
    remindersMinutes: p.array((i) => Number(i)).columnType('int[]'),
    tagIds: p.array().columnType('uuid[]'),
    parentTaskId: p.uuid().nullable(),
    recurrenceSeriesId: p.uuid().nullable(),
    recurrenceIndex: p.integer().nullable(),
    recurrenceIsException: p.boolean(),
    origin: p.string().length(40),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  indexes: [
    // The listing's order (start_date nulls last, id) within a company.
    { name: 'tasks_company_start_idx', properties: ['companyId', 'startDate', 'id'] },
    { name: 'tasks_parent_idx', properties: ['parentTaskId'], where: 'parent_task_id is not null' },
    { name: 'tasks_series_idx', properties: ['recurrenceSeriesId', 'recurrenceIndex'], where: 'recurrence_series_id is not null' },
    { name: 'tasks_company_responsible_idx', properties: ['companyId', 'responsibleId'] },
    { name: 'tasks_lead_idx', properties: ['companyId', 'crmLeadId'], where: 'crm_lead_id is not null' },
    { name: 'tasks_deal_idx', properties: ['companyId', 'crmDealId'], where: 'crm_deal_id is not null' },
    { name: 'tasks_person_idx', properties: ['companyId', 'crmPersonId'], where: 'crm_person_id is not null' },
    { name: 'tasks_organization_idx', properties: ['companyId', 'crmOrganizationId'], where: 'crm_organization_id is not null' },
    { name: 'tasks_tags_idx', properties: ['tagIds'], type: 'gin' },
  ],
});
export type Task = InferEntity<typeof Task>;
