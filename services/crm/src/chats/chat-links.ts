import { credentials } from '@grpc/grpc-js';
import { callUnary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import { ChatLinkServiceClient, type PersonChat } from '@svc/proto/chat/v1/chat';
import type { Pool } from 'pg';
import { type ChatFieldsSource, type LeadPerson, NO_CHAT_FIELDS } from '../leads/lead.detail.js';

/** The lead detail waits at most this long for chat (ms); past it the chat fields are empty, the detail still answers. */
const DEADLINE_MS = 500;

/**
 * The chat fields of the lead detail (has_channel_chat, channel_chats and their whatsapp_* aliases), asked of the
 * chat service over gRPC (chat.v1.ChatLinkService) for the lead's persons; names and avatars of the chats'
 * responsible users are crm's own. When chat is not configured (CHAT_GRPC_URL unset) or does not answer in time,
 * the fields are empty rather than the detail failing (decision 0066).
 */
export class ChatLinks implements ChatFieldsSource {
  private readonly client: ChatLinkServiceClient | null;

  constructor(
    address: string | undefined,
    private readonly pool: Promise<Pool>,
    private readonly logger: Logger,
  ) {
    this.client = address ? new ChatLinkServiceClient(address, credentials.createInsecure()) : null;
  }

  async fieldsJson(companyId: string, persons: LeadPerson[]): Promise<string> {
    if (!this.client) return NO_CHAT_FIELDS;
    let chats: PersonChat[];
    try {
      ({ chats } = await callUnary(
        this.client,
        this.client.getPersonChats,
        { company_id: companyId, person_ids: persons.map((p) => p.id) },
        DEADLINE_MS,
      ));
    } catch (err) {
      this.logger.warn({ err }, 'chat fields of a lead detail left empty: chat did not answer');
      return NO_CHAT_FIELDS;
    }
    if (!chats.length) return NO_CHAT_FIELDS;
    const userIds = [...new Set(chats.map((c) => c.responsible_user_id).filter((id): id is string => !!id))];
    const users = new Map<string, { id: string; name: string; avatar: string | null }>();
    if (userIds.length) {
      const { rows } = await (await this.pool).query<{ id: string; name: string; avatar: string | null }>({
        name: 'crm_users_for_chat_fields',
        text: 'select id, name, avatar from users where company_id = $1 and id = any($2::uuid[])',
        values: [companyId, userIds],
      });
      for (const u of rows) users.set(u.id, u);
    }
    const names = new Map(persons.map((p) => [p.id, p.name]));
    const summaries = chats.map((c) => ({
      chat_id: c.chat_id,
      title: c.title,
      person_id: c.person_id,
      person_name: names.get(c.person_id) ?? null,
      channel_account_id: c.channel_account_id,
      type: c.chat_type,
      channel_type: c.channel_type,
      unread_count: c.unread_count,
      channel_account_name: c.channel_account_name,
      whatsapp_number_verified_name: c.whatsapp_number_verified_name ?? null,
      external_contact_id: c.external_contact_id ?? null,
      external_contact_handle: c.external_contact_handle ?? null,
      chat_responsible: c.responsible_user_id ? (users.get(c.responsible_user_id) ?? null) : null,
    }));
    const list = JSON.stringify(summaries);
    // whatsapp_chats is the spec's alias of channel_chats on the HTTP routes: the same summaries.
    return `"has_channel_chat":true,"channel_chats":${list},"has_whatsapp_chat":true,"whatsapp_chats":${list}`;
  }

  close(): void {
    this.client?.close();
  }
}
