import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** A message to send later (spec, Scheduled message). The scheduler claims due PENDING rows (decision 0063). */
export const ScheduledMessage = defineEntity({
  name: 'ScheduledMessage',
  tableName: 'scheduled_messages',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    chatId: p.uuid().index(),
    status: p.string().length(20),
    messageKind: p.string().length(20),
    cancelReason: p.string().length(40).nullable(),
    cancelReasonDescription: p.text().nullable(),
    failureReason: p.text().nullable(),
    cancelOnInbound: p.boolean(),
    scheduledAt: p.datetime(),
    processedAt: p.datetime().nullable(),
    sentAt: p.datetime().nullable(),
    canceledAt: p.datetime().nullable(),
    createdByUserId: p.uuid().nullable(),
    senderAgentId: p.uuid().nullable(),
    canceledByUserId: p.uuid().nullable(),
    payload: p.json<Record<string, unknown>>(),
    attachments: p.json<unknown[]>(),
    sentMessageIds: p.array().columnType('uuid[]'),
    whatsappAiAgentId: p.uuid().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  indexes: [{ name: 'scheduled_messages_due_idx', properties: ['scheduledAt'], where: "status = 'PENDING'" }],
});
export type ScheduledMessage = InferEntity<typeof ScheduledMessage>;
