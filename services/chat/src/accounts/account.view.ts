import type { StoredAgent, StoredInstagram, StoredNumber, StoredTemplate } from './account.store.js';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export const numberView = (n: StoredNumber) => ({
  id: n.id,
  display_number: n.displayNumber,
  raw_number: n.rawNumber,
  phone_number_id: n.phoneNumberId,
  verified_name: n.verifiedName,
  provider: n.provider,
  business_account_id: n.businessAccountId,
  provider_status: n.providerStatus,
  created_at: iso(n.createdAt),
});

export const instagramView = (a: StoredInstagram) => ({
  id: a.id,
  handle: a.handle,
  display_name: a.displayName,
  external_account_id: a.externalAccountId,
  provider: a.provider,
  provider_status: a.providerStatus,
  created_at: iso(a.createdAt),
});

export const agentView = (a: StoredAgent) => ({
  agent_id: a.id,
  user_id: a.userId,
  status: a.status,
  whatsapp_number_ids: a.whatsappNumberIds,
  instagram_account_ids: a.instagramAccountIds,
});

/** A template as GET /chats/{id}/templates lists it (the shape of the provider's template objects). */
export const templateView = (
  t: Pick<StoredTemplate, 'id' | 'whatsappNumberId' | 'name' | 'language' | 'category' | 'status' | 'components'>,
) => ({
  id: t.id,
  whatsapp_number_id: t.whatsappNumberId,
  name: t.name,
  language: t.language,
  category: t.category,
  status: t.status,
  components: t.components,
});
