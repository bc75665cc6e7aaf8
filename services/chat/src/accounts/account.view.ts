/** Rows of the account tables as pg returns them (snake_case columns). */
export interface NumberRow {
  id: string;
  company_id: string;
  display_number: string;
  raw_number: string;
  phone_number_id: string;
  verified_name: string | null;
  provider: string;
  business_account_id: string | null;
  provider_status: string;
  created_at: Date;
}

export interface InstagramRow {
  id: string;
  company_id: string;
  handle: string;
  display_name: string;
  external_account_id: string;
  provider: string;
  provider_status: string;
  created_at: Date;
}

export interface AgentRow {
  id: string;
  company_id: string;
  user_id: string;
  status: string;
  whatsapp_number_ids: string[];
  instagram_account_ids: string[];
}

export interface TemplateRow {
  id: string;
  company_id: string;
  whatsapp_number_id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  components: unknown[];
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export const numberView = (n: NumberRow) => ({
  id: n.id,
  display_number: n.display_number,
  raw_number: n.raw_number,
  phone_number_id: n.phone_number_id,
  verified_name: n.verified_name,
  provider: n.provider,
  business_account_id: n.business_account_id,
  provider_status: n.provider_status,
  created_at: iso(n.created_at),
});

export const instagramView = (a: InstagramRow) => ({
  id: a.id,
  handle: a.handle,
  display_name: a.display_name,
  external_account_id: a.external_account_id,
  provider: a.provider,
  provider_status: a.provider_status,
  created_at: iso(a.created_at),
});

export const agentView = (a: AgentRow) => ({
  agent_id: a.id,
  user_id: a.user_id,
  status: a.status,
  whatsapp_number_ids: a.whatsapp_number_ids,
  instagram_account_ids: a.instagram_account_ids,
});

/** A template as GET /chats/{id}/templates lists it (the shape of the provider's template objects). */
export const templateView = (t: TemplateRow) => ({
  id: t.id,
  whatsapp_number_id: t.whatsapp_number_id,
  name: t.name,
  language: t.language,
  category: t.category,
  status: t.status,
  components: t.components,
});
