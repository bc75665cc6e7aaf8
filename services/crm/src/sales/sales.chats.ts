/**
 * The chat fields of leads and deals (has_channel_chat, channel_chats, has_whatsapp_chat, whatsapp_chats): the chats of
 * the record's persons live in the chat service, which crm asks over gRPC (chat.v1.ChatLinkService, decision 0066);
 * the names and avatars of their responsible users are crm's. The details show the HTTP routes' shape
 * (`whatsapp_chats` an alias of `channel_chats`); events carry the webhook's own (decision 0130).
 */

import type { Logger } from '@svc/platform/logging';
import type { PersonChat } from '@svc/proto/chat/v1/chat';
import type { Pool, PoolClient } from 'pg';
import { chatResponsibles } from './sales.chats.store.js';
import type { UserSummary } from './sales.summaries.js';

/** Where the chats of persons come from: the chat service's client (chats/chat-links.ts), set at start in service.ts. */
export interface ChatSource {
  /**
   * The not archived chats of these persons of the company, newest activity first. Never rejects: when chat fails or
   * misses its deadline the answer is [] (and a warning is logged), so a read or an event never waits on chat's health.
   */
  personChats(companyId: string, personIds: string[]): Promise<PersonChat[]>;
}

/** A chat of one of a record's persons, with crm's summary of its responsible user. */
export interface LinkedChat extends PersonChat {
  responsible: UserSummary | null;
}

/** A record's person as the chat summaries name it. */
interface NamedPerson {
  id: string;
  name: string | null;
}

/** `chats` with their responsible users' summaries, read from crm's users on `db`. */
export async function withResponsibles(db: Pool | PoolClient, companyId: string, chats: PersonChat[]): Promise<LinkedChat[]> {
  const ids = [...new Set(chats.flatMap((c) => (c.responsible_user_id ? [c.responsible_user_id] : [])))];
  const users = new Map<string, UserSummary>();
  if (ids.length) for (const u of await chatResponsibles(db, companyId, ids)) users.set(u.id, u);
  return chats.map((c) => ({ ...c, responsible: c.responsible_user_id ? (users.get(c.responsible_user_id) ?? null) : null }));
}

/** The chats of `personIds` as LinkedChats: one call to chat, then crm's users on `db` (nothing asked without persons). */
export async function linkedChats(
  source: ChatSource,
  db: Pool | PoolClient,
  companyId: string,
  personIds: string[],
): Promise<LinkedChat[]> {
  if (!personIds.length) return [];
  return withResponsibles(db, companyId, await source.personChats(companyId, personIds));
}

/** The spec's chat summary (Lead detail, `channel_chats`). */
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

/**
 * The webhook's own snapshot of an open WhatsApp chat (spec, Lead payloads: "with chat_id and a nested phone_number"),
 * its fields taken from the spec's WhatsApp chat detail; `phone_number` is the company's number the chat is on.
 */
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

/** Open: a WhatsApp chat not archived (chat answers no archived one) and not RESOLVED (OPEN or SNOOZED). */
const isOpenWhatsapp = (c: LinkedChat): c is LinkedChat & { whatsapp_number: NonNullable<PersonChat['whatsapp_number']> } =>
  c.channel_type === 'WHATSAPP' && c.status !== 'RESOLVED' && c.whatsapp_number !== undefined;

const namesOf = (persons: NamedPerson[]) => new Map(persons.map((p) => [p.id, p.name]));

/** `chats` of `persons` only (a person no longer linked to the record shows none), in chat's order. */
const ofPersons = (chats: LinkedChat[], persons: NamedPerson[]) => {
  const names = namesOf(persons);
  return chats.filter((c) => names.has(c.person_id)).map((c) => ({ chat: c, name: names.get(c.person_id) ?? null }));
};

/** The chat fields of lead and deal events: the multichannel summaries, and the open WhatsApp chats in the webhook's shape. */
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

/** The chat fields of the details: the summaries, and `whatsapp_*` as their alias (spec, Lead detail). */
export function detailChatFields(chats: LinkedChat[], persons: NamedPerson[]) {
  const summaries = ofPersons(chats, persons).map(({ chat, name }) => channelChatSummary(chat, name));
  const has = summaries.length > 0;
  return { has_channel_chat: has, channel_chats: summaries, has_whatsapp_chat: has, whatsapp_chats: summaries };
}

/** The keys of the chat fields (left out of the list records, which do not ask chat). */
export const CHAT_FIELD_KEYS = ['has_channel_chat', 'channel_chats', 'has_whatsapp_chat', 'whatsapp_chats'] as const;
export type ChatFieldKey = (typeof CHAT_FIELD_KEYS)[number];

/**
 * The chats of a record's persons for the snapshot its events carry (decision 0130), asked of chat before the
 * transaction that writes the events, for the persons known then. In the transaction, `of` answers for the record's
 * persons after the change: a person linked there that was neither asked about nor created by the change (a person
 * a deduplication found inside the transaction, when another request created it since) is the one case that asks chat
 * inside the transaction, again for all the persons so that the list keeps chat's order.
 */
export class ChatPrefetch {
  private constructor(
    private readonly source: ChatSource | null,
    private readonly companyId: string,
    private readonly asked: ReadonlySet<string>,
    private readonly chats: LinkedChat[],
  ) {}

  /** Nothing to ask: no chat service, or a record without persons. */
  static readonly none = new ChatPrefetch(null, '', new Set(), []);

  /**
   * Asks chat for the chats of `personIds` (duplicates ignored; none: no call) and crm's users on `pool`. A failure of
   * crm's read is logged and leaves the persons unasked, so the transaction asks again.
   */
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

  /** The chats of `personIds` (the record's, after the change); `created` are persons the change itself created. */
  async of(db: PoolClient, personIds: string[], created: ReadonlySet<string> = new Set()): Promise<LinkedChat[]> {
    if (!this.source || !personIds.length) return [];
    const unknown = personIds.some((id) => !this.asked.has(id) && !created.has(id));
    const chats = unknown ? await linkedChats(this.source, db, this.companyId, personIds) : this.chats;
    const wanted = new Set(personIds);
    return chats.filter((c) => wanted.has(c.person_id));
  }
}
