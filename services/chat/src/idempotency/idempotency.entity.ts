import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** Decision 0188: `unknown` when the provider may have received the message; the server never sends it again. */
export const ChatIdempotencyKey = defineEntity({
  name: 'ChatIdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    companyId: p.uuid().primary(),
    key: p.string().length(255).primary(),
    operation: p.string().length(120),
    status: p.string().length(12),
    answerStatus: p.integer().nullable(),
    answer: p.json<unknown>().nullable(),
    createdAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
  },
});
export type ChatIdempotencyKey = InferEntity<typeof ChatIdempotencyKey>;
