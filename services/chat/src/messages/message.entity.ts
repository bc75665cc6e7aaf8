import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** `wamid` is unique per chat, so a repeated provider callback is a no-op; order is (created_at, id). */
export const Message = defineEntity({
  name: 'Message',
  tableName: 'messages',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    chatId: p.uuid(),
    wamid: p.string().length(200).nullable(),
    refWamid: p.string().length(200).nullable(),
    type: p.string().length(30),
    origin: p.string().length(20),
    fromMe: p.boolean(),
    sentVia: p.string().length(20),
    status: p.string().length(20),
    bodyText: p.text().nullable(),
    transcription: p.text().nullable(),
    contentPayload: p.json<Record<string, unknown>>().nullable(),
    media: p.json<Record<string, unknown>>().nullable(),
    quotedMessageId: p.uuid().nullable(),
    agentId: p.uuid().nullable(),
    userId: p.uuid().nullable(),
    whatsappAiAgentId: p.uuid().nullable(),
    errorCode: p.integer().nullable(),
    errorMessage: p.text().nullable(),
    isHistory: p.boolean(),
    isForwarded: p.boolean(),
    metaTimestamp: p.datetime().nullable(),
    deletedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  uniques: [{ name: 'messages_chat_wamid_unique', properties: ['chatId', 'wamid'] }],
  indexes: [
    { name: 'messages_chat_order_idx', properties: ['chatId', 'createdAt', 'id'] },
    { name: 'messages_wamid_idx', properties: ['wamid'], where: 'wamid is not null' },
  ],
});
export type Message = InferEntity<typeof Message>;

export const MessageReaction = defineEntity({
  name: 'MessageReaction',
  tableName: 'message_reactions',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    messageId: p.uuid().index(),
    emoji: p.string().length(20),
    actor: p.string().length(20),
    reactorWaId: p.string().length(50).nullable(),
    reactorUserId: p.uuid().nullable(),
    createdAt: p.datetime(),
  },
});
export type MessageReaction = InferEntity<typeof MessageReaction>;
