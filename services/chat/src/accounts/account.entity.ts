import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** A WhatsApp Business number of a company; `phone_number_id` is the provider's id, which routes its callbacks. */
export const WhatsappNumber = defineEntity({
  name: 'WhatsappNumber',
  tableName: 'whatsapp_numbers',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    displayNumber: p.string().length(50),
    rawNumber: p.string().length(30),
    phoneNumberId: p.string().length(100).unique(),
    verifiedName: p.string().length(200).nullable(),
    provider: p.string().length(30),
    businessAccountId: p.string().length(100).nullable(),
    providerStatus: p.string().length(30),
    createdAt: p.datetime(),
  },
});
export type WhatsappNumber = InferEntity<typeof WhatsappNumber>;

/** An Instagram professional account of a company; `external_account_id` is the provider's id. */
export const InstagramAccount = defineEntity({
  name: 'InstagramAccount',
  tableName: 'instagram_accounts',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    handle: p.string().length(100),
    displayName: p.string().length(200),
    externalAccountId: p.string().length(100).unique(),
    provider: p.string().length(30),
    providerStatus: p.string().length(30),
    createdAt: p.datetime(),
  },
});
export type InstagramAccount = InferEntity<typeof InstagramAccount>;

/** A user acting on numbers and accounts. `id` (the agent_id of the API) is not the user's id. */
export const Agent = defineEntity({
  name: 'Agent',
  tableName: 'agents',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    userId: p.uuid(),
    status: p.string().length(20),
    whatsappNumberIds: p.array().columnType('uuid[]'),
    instagramAccountIds: p.array().columnType('uuid[]'),
    createdAt: p.datetime(),
  },
  uniques: [{ name: 'agents_company_user_unique', properties: ['companyId', 'userId'] }],
});
export type Agent = InferEntity<typeof Agent>;

/** A message template approved for a WhatsApp number. */
export const MessageTemplate = defineEntity({
  name: 'MessageTemplate',
  tableName: 'message_templates',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    whatsappNumberId: p.uuid(),
    name: p.string().length(200),
    language: p.string().length(20),
    category: p.string().length(20),
    status: p.string().length(20),
    components: p.json<unknown[]>(),
    createdAt: p.datetime(),
  },
  uniques: [{ name: 'message_templates_number_name_language_unique', properties: ['whatsappNumberId', 'name', 'language'] }],
  indexes: [{ name: 'message_templates_company_number_idx', properties: ['companyId', 'whatsappNumberId'] }],
});
export type MessageTemplate = InferEntity<typeof MessageTemplate>;
