import { forbidden, invalidField, notFound, requireUuid } from '@svc/platform/errors';
import type { Logger } from '@svc/platform/logging';
import type { Pool } from 'pg';
import { z } from 'zod';
import { contactOf, providerOf } from '../messages/message.send.js';
import { readMessage } from '../messages/message.store.js';
import { messageView, usersOf } from '../messages/message.view.js';
import type { CrmPeople } from '../people/crm-people.js';
import { isProviderError, type ProviderRegistry, providerErrorToAppError } from '../providers/provider.js';
import { CHAT_PERMISSIONS } from './chat.permissions.js';
import type { ChatActor, ChatService } from './chat.service.js';

export const responsibleBody = z.strictObject({
  user_id: z.uuid('must be a UUID'),
  update_chat: z.boolean().optional(),
  update_leads: z.boolean().optional(),
  update_deals: z.boolean().optional(),
});

export const typingBody = z.strictObject({
  is_typing: z.boolean({ message: 'is required (true or false)' }),
  reference_wamid: z.string().max(200, 'must be at most 200 characters').optional(),
});

export const templatesQuery = z.object({
  category: z
    .enum(['AUTHENTICATION', 'MARKETING', 'UTILITY', 'SERVICE'], { message: 'must be AUTHENTICATION, MARKETING, UTILITY or SERVICE' })
    .optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  after: z.string().max(200).optional(),
  before: z.string().max(200).optional(),
});

const rethrowProvider = (err: unknown): never => {
  throw isProviderError(err) ? providerErrorToAppError(err) : err;
};

/** The chat's smaller routes: responsible, participants, read, typing, message deletion, templates, unread summary. */
export class ChatActions {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly chats: ChatService,
    private readonly people: CrmPeople,
    private readonly providers: ProviderRegistry,
    private readonly logger: Logger,
  ) {}

  /**
   * PATCH /chats/{id}/responsible: the user's agent on the chat's account becomes the assigned agent (and a
   * participant); with update_leads / update_deals crm makes the user responsible of the person's open leads / deals.
   */
  async responsible(actor: ChatActor, id: string, b: z.infer<typeof responsibleBody>) {
    if (b.update_leads && !actor.permissions(CHAT_PERMISSIONS.leadUpdate))
      throw forbidden(`The key lacks the permission ${CHAT_PERMISSIONS.leadUpdate}`);
    if (b.update_deals && !actor.permissions(CHAT_PERMISSIONS.dealUpdate))
      throw forbidden(`The key lacks the permission ${CHAT_PERMISSIONS.dealUpdate}`);
    const chat = await this.chats.read(actor.companyId, id);
    const user = (await this.people.users(actor.companyId, [b.user_id])).get(b.user_id);
    if (!user?.active || user.archived) throw invalidField('user_id', 'no active user of the company has this id');
    const pool = await this.pool();
    if (b.update_chat ?? true) {
      const column = chat.channel_type === 'INSTAGRAM' ? 'instagram_account_ids' : 'whatsapp_number_ids';
      const { rows } = await pool.query<{ id: string }>(
        `select id from agents where company_id = $1 and user_id = $2 and $3::uuid = any(${column})`,
        [actor.companyId, b.user_id, chat.channel_account_id],
      );
      const agent = rows[0];
      if (!agent) throw invalidField('user_id', "the user is not an agent of the chat's number or account");
      await pool.query('update chats set assigned_agent_id = $3, updated_at = now() where company_id = $1 and id = $2', [
        actor.companyId,
        id,
        agent.id,
      ]);
      await pool.query(
        'insert into chat_participants (chat_id, agent_id, company_id, created_at) values ($1, $2, $3, now()) on conflict do nothing',
        [id, agent.id, actor.companyId],
      );
    }
    if ((b.update_leads || b.update_deals) && chat.person_id) {
      await this.people.assignPersonRecords({
        companyId: actor.companyId,
        actorUserId: actor.userId,
        personId: chat.person_id,
        userId: b.user_id,
        leads: b.update_leads ?? false,
        deals: b.update_deals ?? false,
      });
    }
    return this.chats.detail(actor.companyId, id);
  }

  /** DELETE /chats/{id}/participants/{userId}: the user's agent leaves the chat (and stops being its assigned agent). */
  async removeParticipant(actor: ChatActor, id: string, userId: string) {
    await this.chats.read(actor.companyId, id);
    requireUuid(userId, 'Participant');
    const pool = await this.pool();
    const { rows } = await pool.query<{ agent_id: string }>(
      `delete from chat_participants p using agents a where p.chat_id = $1 and p.agent_id = a.id and a.company_id = $2 and a.user_id = $3
       returning p.agent_id`,
      [id, actor.companyId, userId],
    );
    if (!rows.length) throw notFound('Participant');
    await pool.query(
      'update chats set assigned_agent_id = null, updated_at = now() where id = $1 and assigned_agent_id = any($2::uuid[])',
      [id, rows.map((r) => r.agent_id)],
    );
    return this.chats.detail(actor.companyId, id);
  }

  /**
   * POST /chats/{id}/read: unread_count 0 and no manual mark. The provider is told the contact's last message was
   * read; its failure does not undo the local read (logged).
   */
  async read(actor: ChatActor, id: string) {
    const chat = await this.chats.read(actor.companyId, id);
    const pool = await this.pool();
    await pool.query(
      'update chats set unread_count = 0, is_manually_unread = false, updated_at = now() where company_id = $1 and id = $2',
      [actor.companyId, id],
    );
    const last = await pool.query<{ wamid: string }>(
      `select wamid from messages where chat_id = $1 and not from_me and wamid is not null order by created_at desc, id desc limit 1`,
      [id],
    );
    try {
      await providerOf(this.providers, chat).markRead({ to: contactOf(chat), messageId: last.rows[0]?.wamid });
    } catch (err) {
      this.logger.warn({ err, chatId: id }, 'provider read receipt failed');
    }
    return this.chats.detail(actor.companyId, id);
  }

  /** POST /chats/{id}/messages/typing: the indicator at the provider (WhatsApp answers the contact's last message). */
  async typing(actor: ChatActor, id: string, b: z.infer<typeof typingBody>) {
    const chat = await this.chats.read(actor.companyId, id);
    const pool = await this.pool();
    let messageId = b.reference_wamid;
    if (!messageId) {
      const last = await pool.query<{ wamid: string }>(
        `select wamid from messages where chat_id = $1 and not from_me and wamid is not null order by created_at desc, id desc limit 1`,
        [id],
      );
      messageId = last.rows[0]?.wamid;
    }
    await providerOf(this.providers, chat)
      .setTyping({ to: contactOf(chat), isTyping: b.is_typing, messageId })
      .catch(rethrowProvider);
    return { chat_id: id, is_typing: b.is_typing, reference_wamid: b.reference_wamid ?? null, dispatched_at: new Date().toISOString() };
  }

  /** DELETE /chats/{id}/messages/{messageId}: the company's own sent message, deleted at the provider first. */
  async deleteMessage(actor: ChatActor, id: string, messageId: string) {
    const chat = await this.chats.read(actor.companyId, id);
    requireUuid(messageId, 'Message');
    const pool = await this.pool();
    const m = await readMessage(pool, actor.companyId, messageId);
    if (!m || m.chat_id !== id) throw notFound('Message');
    if (!m.from_me) throw invalidField('messageId', "only the company's own messages can be deleted");
    if (!m.wamid || m.status === 'failed' || m.status === 'deleted')
      throw invalidField('messageId', `a ${m.status} message cannot be deleted`);
    await providerOf(this.providers, chat)
      .deleteMessage({ to: contactOf(chat), messageId: m.wamid })
      .catch(rethrowProvider);
    await pool.query(`update messages set status = 'deleted', deleted_at = now(), updated_at = now() where id = $1`, [messageId]);
    const after = (await readMessage(pool, actor.companyId, messageId))!;
    return messageView(after, await this.people.users(actor.companyId, usersOf(after, new Set())));
  }

  /**
   * GET /chats/{id}/templates: the approved templates of the chat's number (the catalog the management API keeps),
   * in the provider's list shape, paged by name with opaque before/after cursors. Instagram has none.
   */
  async templates(actor: ChatActor, id: string, q: z.infer<typeof templatesQuery>) {
    const chat = await this.chats.read(actor.companyId, id);
    const limit = q.limit ?? 25;
    if (chat.channel_type !== 'WHATSAPP') return { data: [], paging: { cursors: { before: null, after: null } } };
    const decode = (c: string | undefined) => (c ? Buffer.from(c, 'base64url').toString('utf8') : null);
    const after = decode(q.after);
    const before = decode(q.before);
    const { rows } = await (await this.pool()).query(
      `select * from (select id, whatsapp_number_id, name, language, category, status, components, name || ' ' || language || ' ' || id as k
         from message_templates where company_id = $1 and whatsapp_number_id = $2 and status = 'APPROVED' and ($3::text is null or category = $3)
           and ($4::text is null or name || ' ' || language || ' ' || id > $4) and ($5::text is null or name || ' ' || language || ' ' || id < $5)
         order by k ${before ? 'desc' : 'asc'} limit $6) t order by k`,
      [actor.companyId, chat.channel_account_id, q.category ?? null, after, before, limit],
    );
    const enc = (k: string | undefined) => (k ? Buffer.from(k).toString('base64url') : null);
    return {
      data: rows.map(({ k: _k, ...t }) => t),
      paging: { cursors: { before: enc(rows[0]?.k), after: enc(rows.at(-1)?.k) } },
    };
  }

  /**
   * GET /chats/unread-summary: unread chats (unread_count > 0 or manually unread) and unread messages, per channel
   * account and in total, over the chats that are not archived (decision 0065).
   */
  async unreadSummary(actor: ChatActor) {
    const { rows } = await (await this.pool()).query<{
      channel_account_id: string;
      channel_type: string;
      display_name: string;
      unread_chats: number;
      unread_messages: number;
    }>(
      `select c.channel_account_id, c.channel_type,
         coalesce((select coalesce(n.verified_name, n.display_number) from whatsapp_numbers n where n.id = c.channel_account_id),
                  (select i.display_name from instagram_accounts i where i.id = c.channel_account_id)) as display_name,
         count(*) filter (where c.unread_count > 0 or c.is_manually_unread)::int as unread_chats,
         coalesce(sum(c.unread_count), 0)::int as unread_messages
       from chats c where c.company_id = $1 and c.archived_at is null
       group by c.channel_account_id, c.channel_type having count(*) filter (where c.unread_count > 0 or c.is_manually_unread) > 0
       order by c.channel_type, display_name, c.channel_account_id`,
      [actor.companyId],
    );
    return {
      total: {
        unread_chats: rows.reduce((n, r) => n + r.unread_chats, 0),
        unread_messages: rows.reduce((n, r) => n + r.unread_messages, 0),
      },
      channel_accounts: rows,
    };
  }
}
