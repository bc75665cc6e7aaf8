import { forbidden, invalidField, notFound, requireUuid } from '@svc/platform/errors';
import type { Logger } from '@svc/platform/logging';
import type { Pool } from 'pg';
import { z } from 'zod';
import { agentOfUser, approvedTemplates } from '../accounts/account.store.js';
import { templateView } from '../accounts/account.view.js';
import { lastInboundWamid, markDeleted, readMessage } from '../messages/message.store.js';
import { messageView, usersOf } from '../messages/message.view.js';
import type { CrmPeople } from '../people/crm-people.js';
import { isProviderError, type ProviderRegistry, providerErrorToAppError } from '../providers/provider.js';
import { CHAT_PERMISSIONS } from './chat.permissions.js';
import { contactOf, providerOf } from './chat.provider.js';
import type { ChatActor, ChatService } from './chat.service.js';
import { assignAgent, markChatRead, unassignAgents, unreadByAccount } from './chat.store.js';
import { addParticipant, removeUserFromChat } from './participant.store.js';

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

export class ChatActions {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly chats: ChatService,
    private readonly people: CrmPeople,
    private readonly providers: ProviderRegistry,
    private readonly logger: Logger,
  ) {}

  /** With update_leads / update_deals, crm makes the user responsible of the person's open leads / deals. */
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
      const agentId = await agentOfUser(pool, actor.companyId, b.user_id, chat.channelType, chat.channelAccountId);
      if (!agentId) throw invalidField('user_id', "the user is not an agent of the chat's number or account");
      await assignAgent(pool, actor.companyId, id, agentId);
      await addParticipant(pool, actor.companyId, id, agentId);
    }
    if ((b.update_leads || b.update_deals) && chat.personId) {
      await this.people.assignPersonRecords({
        companyId: actor.companyId,
        actorUserId: actor.userId,
        personId: chat.personId,
        userId: b.user_id,
        leads: b.update_leads ?? false,
        deals: b.update_deals ?? false,
      });
    }
    return this.chats.detail(actor.companyId, id);
  }

  /** The agent also stops being the assigned agent. */
  async removeParticipant(actor: ChatActor, id: string, userId: string) {
    await this.chats.read(actor.companyId, id);
    requireUuid(userId, 'Participant');
    const pool = await this.pool();
    const agentIds = await removeUserFromChat(pool, actor.companyId, id, userId);
    if (!agentIds.length) throw notFound('Participant');
    await unassignAgents(pool, id, agentIds);
    return this.chats.detail(actor.companyId, id);
  }

  /** A provider failure does not undo the local read (logged). */
  async read(actor: ChatActor, id: string) {
    const chat = await this.chats.read(actor.companyId, id);
    const pool = await this.pool();
    await markChatRead(pool, actor.companyId, id);
    const last = await lastInboundWamid(pool, id);
    try {
      await providerOf(this.providers, chat).markRead({ to: contactOf(chat), messageId: last });
    } catch (err) {
      this.logger.warn({ err, chatId: id }, 'provider read receipt failed');
    }
    return this.chats.detail(actor.companyId, id);
  }

  /** WhatsApp answers the contact's last message. */
  async typing(actor: ChatActor, id: string, b: z.infer<typeof typingBody>) {
    const chat = await this.chats.read(actor.companyId, id);
    const pool = await this.pool();
    let messageId: string | undefined = b.reference_wamid;
    if (!messageId) messageId = await lastInboundWamid(pool, id);
    await providerOf(this.providers, chat)
      .setTyping({ to: contactOf(chat), isTyping: b.is_typing, messageId })
      .catch(rethrowProvider);
    return { chat_id: id, is_typing: b.is_typing, reference_wamid: b.reference_wamid ?? null, dispatched_at: new Date().toISOString() };
  }

  /** Deleted at the provider first. */
  async deleteMessage(actor: ChatActor, id: string, messageId: string) {
    const chat = await this.chats.read(actor.companyId, id);
    requireUuid(messageId, 'Message');
    const pool = await this.pool();
    const m = await readMessage(pool, actor.companyId, messageId);
    if (!m || m.chatId !== id) throw notFound('Message');
    if (!m.fromMe) throw invalidField('messageId', "only the company's own messages can be deleted");
    if (!m.wamid || m.status === 'failed' || m.status === 'deleted')
      throw invalidField('messageId', `a ${m.status} message cannot be deleted`);
    await providerOf(this.providers, chat)
      .deleteMessage({ to: contactOf(chat), messageId: m.wamid })
      .catch(rethrowProvider);
    await markDeleted(pool, messageId);
    const after = (await readMessage(pool, actor.companyId, messageId))!;
    return messageView(after, await this.people.users(actor.companyId, usersOf(after, new Set())));
  }

  /** Instagram has none; paged by name with opaque cursors. */
  async templates(actor: ChatActor, id: string, q: z.infer<typeof templatesQuery>) {
    const chat = await this.chats.read(actor.companyId, id);
    const limit = q.limit ?? 25;
    if (chat.channelType !== 'WHATSAPP') return { data: [], paging: { cursors: { before: null, after: null } } };
    const decode = (c: string | undefined) => (c ? Buffer.from(c, 'base64url').toString('utf8') : null);
    const after = decode(q.after);
    const before = decode(q.before);
    const rows = await approvedTemplates(await this.pool(), actor.companyId, chat.channelAccountId, {
      category: q.category ?? null,
      after,
      before,
      limit,
    });
    const enc = (k: string | undefined) => (k ? Buffer.from(k).toString('base64url') : null);
    return {
      data: rows.map(templateView),
      paging: { cursors: { before: enc(rows[0]?.k), after: enc(rows.at(-1)?.k) } },
    };
  }

  /** Over chats that are not archived (decision 0065). */
  async unreadSummary(actor: ChatActor) {
    const rows = await unreadByAccount(await this.pool(), actor.companyId);
    return {
      total: {
        unread_chats: rows.reduce((n, r) => n + r.unreadChats, 0),
        unread_messages: rows.reduce((n, r) => n + r.unreadMessages, 0),
      },
      channel_accounts: rows.map((r) => ({
        channel_account_id: r.channelAccountId,
        channel_type: r.channelType,
        display_name: r.displayName,
        unread_chats: r.unreadChats,
        unread_messages: r.unreadMessages,
      })),
    };
  }
}
