import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** Decision 0082: only the token's SHA-256 is stored; single-use through `used_at`. */
export const SatisfactionLink = defineEntity({
  name: 'SatisfactionLink',
  tableName: 'satisfaction_links',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    tokenHash: p.string().length(64).unique(),
    recordType: p.string().length(20),
    recordId: p.uuid(),
    formTitle: p.string().length(150),
    formQuestion: p.string().length(500),
    maxScore: p.smallint(),
    createdById: p.uuid(),
    keyId: p.uuid(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type SatisfactionLink = InferEntity<typeof SatisfactionLink>;

/** The answer a link received from the public form. */
export const SatisfactionSubmission = defineEntity({
  name: 'SatisfactionSubmission',
  tableName: 'satisfaction_submissions',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    linkId: p.uuid().unique(),
    score: p.smallint(),
    comment: p.text().nullable(),
    submittedAt: p.datetime(),
  },
});
export type SatisfactionSubmission = InferEntity<typeof SatisfactionSubmission>;
