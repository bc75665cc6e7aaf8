import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** `channel_account_id` is the number or the account, whichever the channel is, so one index serves both. */
export const Chat = defineEntity({
  name: 'Chat',
  tableName: 'chats',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    channelType: p.string().length(20),
    chatType: p.string().length(20),
    channelAccountId: p.uuid(),
    waContactId: p.string().length(50).nullable(),
    contactName: p.string().length(200).nullable(),
    contactNumber: p.string().length(50).nullable(),
    remoteProfileName: p.string().length(200).nullable(),
    externalContactId: p.string().length(100).nullable(),
    externalContactHandle: p.string().length(100).nullable(),
    externalContactDisplayName: p.string().length(200).nullable(),
    externalContactAvatarUrl: p.text().nullable(),
    personId: p.uuid().nullable(),
    status: p.string().length(20),
    priority: p.smallint(),
    unreadCount: p.integer(),
    isManuallyUnread: p.boolean(),
    archivedAt: p.datetime().nullable(),
    lastCustomerMsgAt: p.datetime().nullable(),
    lastMessageId: p.uuid().nullable(),
    lastActivityAt: p.datetime(),
    assignedAgentId: p.uuid().nullable(),
    /** Who wrote first: COMPANY or CONTACT (customer_reply_status). */
    startedBy: p.string().length(10).nullable(),
    /** Company messages since the contact's last message (not_replied_last_messages). */
    trailingOutboundCount: p.integer(),
    aiAgentId: p.uuid().nullable(),
    aiMessageCount: p.integer(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  uniques: [
    { name: 'chats_whatsapp_contact_unique', properties: ['channelAccountId', 'waContactId'] },
    { name: 'chats_instagram_contact_unique', properties: ['channelAccountId', 'externalContactId'] },
  ],
  indexes: [
    // The unified order of GET /chats within a company (decision 0060).
    { name: 'chats_company_activity_idx', properties: ['companyId', 'lastActivityAt', 'id'] },
    { name: 'chats_company_person_idx', properties: ['companyId', 'personId'], where: 'person_id is not null' },
  ],
});
export type Chat = InferEntity<typeof Chat>;

/** The agents taking part in a chat. */
export const ChatParticipant = defineEntity({
  name: 'ChatParticipant',
  tableName: 'chat_participants',
  properties: {
    chatId: p.uuid().primary(),
    agentId: p.uuid().primary(),
    companyId: p.uuid(),
    createdAt: p.datetime(),
  },
});
export type ChatParticipant = InferEntity<typeof ChatParticipant>;

/** A WhatsApp flow run in a chat (created by the admin API and tests only). */
export const FlowSession = defineEntity({
  name: 'FlowSession',
  tableName: 'flow_sessions',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    chatId: p.uuid().index(),
    flowId: p.uuid(),
    flowName: p.string().length(200),
    status: p.string().length(20),
    startedAt: p.datetime(),
    lastActivityAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
    currentStep: p.json<Record<string, unknown>>().nullable(),
  },
});
export type FlowSession = InferEntity<typeof FlowSession>;

/** An action a copilot proposed in a chat (created by the admin API and tests only). */
export const CopilotAction = defineEntity({
  name: 'CopilotAction',
  tableName: 'copilot_actions',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    chatId: p.uuid().index(),
    executionId: p.uuid().nullable(),
    agentId: p.uuid().nullable(),
    agentName: p.string().length(200).nullable(),
    actionKey: p.string().length(100),
    status: p.string().length(30),
    confidence: p.double().nullable(),
    requiresReview: p.boolean(),
    inputPayload: p.json<Record<string, unknown>>().nullable(),
    outputPayload: p.json<Record<string, unknown>>().nullable(),
    failureReason: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    executedAt: p.datetime().nullable(),
  },
});
export type CopilotAction = InferEntity<typeof CopilotAction>;
