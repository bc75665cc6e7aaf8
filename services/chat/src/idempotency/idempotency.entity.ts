import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/**
 * An `x-idempotency-key` of a chat write (decision 0188), per company: `processing` while its request runs, then
 * `done` with the answer replayed to every later request with the key, or `unknown` when the request failed after
 * the provider may have received the message (the server never sends it again).
 */
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
