/** Chat fields of leads and deals: chats live in the chat service, asked over gRPC (decisions 0066, 0130). */

import type { Logger } from '@svc/platform/logging';
import type { PersonChat } from '@svc/proto/chat/v1/chat';
import type { Pool, PoolClient } from 'pg';
import { chatResponsibles } from './sales.chats.store.js';
import type { UserSummary } from './sales.summaries.js';

export interface ChatSource {
  /** Never rejects: a failure or missed deadline answers [], so a read never waits on chat's health. */
  personChats(companyId: string, personIds: string[]): Promise<PersonChat[]>;
}

export interface LinkedChat extends PersonChat {
  responsible: UserSummary | null;
}

interface NamedPerson {
  id: string;
  name: string | null;
}

export async function withResponsibles(db: Pool | PoolClient, companyId: string, chats: PersonChat[]): Promise<LinkedChat[]> {
  const ids = [...new Set(chats.flatMap((c) => (c.responsible_user_id ? [c.responsible_user_id] : [])))];
  const users = new Map<string, UserSummary>();
  if (ids.length) for (const u of await chatResponsibles(db, companyId, ids)) users.set(u.id, u);
  return chats.map((c) => ({ ...c, responsible: c.responsible_user_id ? (users.get(c.responsible_user_id) ?? null) : null }));
}

/** Nothing is asked without persons. */
export async function linkedChats(
  source: ChatSource,
  db: Pool | PoolClient,
  companyId: string,
  personIds: string[],
): Promise<LinkedChat[]> {
  if (!personIds.length) return [];
  return withResponsibles(db, companyId, await source.personChats(companyId, personIds));
}

export const channelChatSummary = (c: LinkedChat, personName: string | null) => ({
  chat_id: c.chat_id,
  title: c.title,
  person_id: c.person_id,
  person_name: personName,
  channel_account_id: c.channel_account_id,
  type: c.chat_type,
  channel_type: c.channel_type,
  unread_count: c.unread_count,
  channel_account_name: c.channel_account_name,
  whatsapp_number_verified_name: c.whatsapp_number_verified_name ?? null,
  external_contact_id: c.external_contact_id ?? null,
  external_contact_handle: c.external_contact_handle ?? null,
  chat_responsible: c.responsible,
});
export type ChannelChatSummary = ReturnType<typeof channelChatSummary>;

/** The webhook's snapshot of an open WhatsApp chat; `phone_number` is the company's number. */
export const webhookWhatsappChat = (
  c: LinkedChat & { whatsapp_number: NonNullable<PersonChat['whatsapp_number']> },
  personName: string | null,
) => ({
  chat_id: c.chat_id,
  status: c.status,
  chat_type: c.chat_type,
  person_id: c.person_id,
  person_name: personName,
  wa_contact_id: c.wa_contact_id ?? null,
  contact_name: c.contact_name ?? null,
  contact_number: c.contact_number ?? null,
  remote_profile_name: c.remote_profile_name ?? null,
  unread_count: c.unread_count,
  phone_number: {
    id: c.whatsapp_number.id,
    display_number: c.whatsapp_number.display_number,
    raw_number: c.whatsapp_number.raw_number,
    phone_number_id: c.whatsapp_number.phone_number_id,
  },
});
export type WebhookWhatsappChat = ReturnType<typeof webhookWhatsappChat>;

const isOpenWhatsapp = (c: LinkedChat): c is LinkedChat & { whatsapp_number: NonNullable<PersonChat['whatsapp_number']> } =>
  c.channel_type === 'WHATSAPP' && c.status !== 'RESOLVED' && c.whatsapp_number !== undefined;

const namesOf = (persons: NamedPerson[]) => new Map(persons.map((p) => [p.id, p.name]));

/** A person no longer linked shows none; chat's order is kept. */
const ofPersons = (chats: LinkedChat[], persons: NamedPerson[]) => {
  const names = namesOf(persons);
  return chats.filter((c) => names.has(c.person_id)).map((c) => ({ chat: c, name: names.get(c.person_id) ?? null }));
};

export function eventChatFields(chats: LinkedChat[], persons: NamedPerson[]) {
  const own = ofPersons(chats, persons);
  const whatsapp = own.flatMap(({ chat, name }) => (isOpenWhatsapp(chat) ? [webhookWhatsappChat(chat, name)] : []));
  return {
    has_channel_chat: own.length > 0,
    channel_chats: own.map(({ chat, name }) => channelChatSummary(chat, name)),
    has_whatsapp_chat: whatsapp.length > 0,
    whatsapp_chats: whatsapp,
  };
}
export type EventChatFields = ReturnType<typeof eventChatFields>;

export function detailChatFields(chats: LinkedChat[], persons: NamedPerson[]) {
  const summaries = ofPersons(chats, persons).map(({ chat, name }) => channelChatSummary(chat, name));
  const has = summaries.length > 0;
  return { has_channel_chat: has, channel_chats: summaries, has_whatsapp_chat: has, whatsapp_chats: summaries };
}

/** Left out of list records, which do not ask chat. */
export const CHAT_FIELD_KEYS = ['has_channel_chat', 'channel_chats', 'has_whatsapp_chat', 'whatsapp_chats'] as const;
export type ChatFieldKey = (typeof CHAT_FIELD_KEYS)[number];

/** Asked before the transaction (decision 0130); only a person found inside it by deduplication makes chat be asked inside. */
export class ChatPrefetch {
  private constructor(
    private readonly source: ChatSource | null,
    private readonly companyId: string,
    private readonly asked: ReadonlySet<string>,
    private readonly chats: LinkedChat[],
  ) {}

  static readonly none = new ChatPrefetch(null, '', new Set(), []);

  /** A failure of crm's read leaves the persons unasked, so the transaction asks again. */
  static async start(source: ChatSource | null, pool: Pool, companyId: string, personIds: string[], logger: Logger): Promise<ChatPrefetch> {
    const ids = [...new Set(personIds)];
    if (!source || !ids.length) return new ChatPrefetch(source, companyId, new Set(), []);
    try {
      return new ChatPrefetch(source, companyId, new Set(ids), await linkedChats(source, pool, companyId, ids));
    } catch (err) {
      logger.warn({ err }, 'chats of a record not read before its transaction');
      return new ChatPrefetch(source, companyId, new Set(), []);
    }
  }

  async of(db: PoolClient, personIds: string[], created: ReadonlySet<string> = new Set()): Promise<LinkedChat[]> {
    if (!this.source || !personIds.length) return [];
    const unknown = personIds.some((id) => !this.asked.has(id) && !created.has(id));
    const chats = unknown ? await linkedChats(this.source, db, this.companyId, personIds) : this.chats;
    const wanted = new Set(personIds);
    return chats.filter((c) => wanted.has(c.person_id));
  }
}
