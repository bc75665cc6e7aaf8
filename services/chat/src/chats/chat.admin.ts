import { conflict, invalidField, notFound, requireUuid } from '@svc/platform/errors';
import { intField } from '@svc/platform/numbers';
import type { CrmPeer } from '@svc/platform/peers/crm';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { countAgents, hasAccount } from '../accounts/account.store.js';
import { CHAT_STATUSES } from './chat.schema.js';
import { chatExists, insertChat, newChat } from './chat.store.js';
import { insertCopilotAction } from './copilot-action.store.js';
import { insertFlowSession } from './flow-session.store.js';
import { addParticipants } from './participant.store.js';

const uuid = z.uuid('must be a UUID');
const when = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a zone' });

/** For operators' imports, the demo seed and tests: the external API creates only WhatsApp chats, by template. */
export const adminChatBody = z
  .strictObject({
    channel_type: z.enum(['WHATSAPP', 'INSTAGRAM']),
    whatsapp_number_id: uuid.optional(),
    instagram_account_id: uuid.optional(),
    wa_contact_id: z
      .string()
      .regex(/^\d{8,15}$/, 'must be 8 to 15 digits')
      .optional(),
    contact_name: z.string().max(200).optional(),
    remote_profile_name: z.string().max(200).optional(),
    external_contact: z
      .strictObject({
        id: z.string().min(1).max(100),
        handle: z.string().max(100).optional(),
        display_name: z.string().max(200).optional(),
        avatar_url: z.url().optional(),
      })
      .optional(),
    person_id: uuid.optional(),
    status: z.enum(CHAT_STATUSES).optional(),
    priority: z.number().int().min(0).max(3).optional(),
    archived: z.boolean().optional(),
    unread_count: intField(0).optional(),
    is_manually_unread: z.boolean().optional(),
    assigned_agent_id: uuid.optional(),
    participant_agent_ids: z.array(uuid).max(50).optional(),
    last_customer_msg_at: when.optional(),
    last_activity_at: when.optional(),
    started_by: z.enum(['COMPANY', 'CONTACT']).optional(),
    trailing_outbound_count: intField(0).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.channel_type === 'WHATSAPP' && (!b.whatsapp_number_id || !b.wa_contact_id))
      ctx.addIssue({
        code: 'custom',
        path: ['whatsapp_number_id'],
        message: 'whatsapp_number_id and wa_contact_id are required for WHATSAPP',
      });
    if (b.channel_type === 'INSTAGRAM' && (!b.instagram_account_id || !b.external_contact))
      ctx.addIssue({
        code: 'custom',
        path: ['instagram_account_id'],
        message: 'instagram_account_id and external_contact are required for INSTAGRAM',
      });
  });

export const adminFlowSessionBody = z.strictObject({
  flow_id: uuid,
  flow_name: z.string().min(1).max(200),
  status: z.enum(['ACTIVE', 'PAUSED', 'FINISHED', 'FAILED']).optional(),
  current_step: z.record(z.string(), z.unknown()).optional(),
});

export const adminCopilotActionBody = z.strictObject({
  action_key: z.string().min(1).max(100),
  status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXECUTED', 'FAILED']).optional(),
  execution_id: uuid.optional(),
  agent_id: uuid.optional(),
  agent_name: z.string().max(200).optional(),
  confidence: z.number().min(0).max(1).optional(),
  requires_review: z.boolean().optional(),
  input_payload: z.record(z.string(), z.unknown()).optional(),
  output_payload: z.record(z.string(), z.unknown()).optional(),
});

const isUniqueViolation = (err: unknown) => typeof err === 'object' && err !== null && 'code' in err && err.code === '23505';

export class ChatAdmin {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly crm: CrmPeer,
  ) {}

  async createChat(companyId: string, b: z.infer<typeof adminChatBody>): Promise<string> {
    await this.crm.getCompany(requireUuid(companyId, 'Company'));
    const pool = await this.pool();
    const whatsapp = b.channel_type === 'WHATSAPP';
    const accountId = (whatsapp ? b.whatsapp_number_id : b.instagram_account_id)!;
    if (!(await hasAccount(pool, companyId, b.channel_type, accountId)))
      throw invalidField(whatsapp ? 'whatsapp_number_id' : 'instagram_account_id', 'not found');
    const agents = [...new Set([...(b.participant_agent_ids ?? []), ...(b.assigned_agent_id ? [b.assigned_agent_id] : [])])];
    if ((await countAgents(pool, companyId, agents)) !== agents.length) throw invalidField('assigned_agent_id', 'agent not found');
    const id = uuidv7();
    const now = new Date();
    const chat = newChat(
      {
        id,
        companyId,
        channelType: b.channel_type,
        channelAccountId: accountId,
        waContactId: b.wa_contact_id ?? null,
        contactName: b.contact_name ?? null,
        contactNumber: b.wa_contact_id ? `+${b.wa_contact_id}` : null,
        remoteProfileName: b.remote_profile_name ?? null,
        externalContactId: b.external_contact?.id ?? null,
        externalContactHandle: b.external_contact?.handle ?? null,
        externalContactDisplayName: b.external_contact?.display_name ?? null,
        externalContactAvatarUrl: b.external_contact?.avatar_url ?? null,
        personId: b.person_id ?? null,
        status: b.status ?? 'OPEN',
        priority: b.priority ?? 1,
        unreadCount: b.unread_count ?? 0,
        isManuallyUnread: b.is_manually_unread ?? false,
        archivedAt: b.archived ? now : null,
        lastCustomerMsgAt: b.last_customer_msg_at ? new Date(b.last_customer_msg_at) : null,
        lastActivityAt: b.last_activity_at ? new Date(b.last_activity_at) : now,
        assignedAgentId: b.assigned_agent_id ?? null,
        startedBy: b.started_by ?? null,
        trailingOutboundCount: b.trailing_outbound_count ?? 0,
      },
      now,
    );
    try {
      await insertChat(pool, chat, false);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('the account already has a chat with this contact');
      throw err;
    }
    if (agents.length) await addParticipants(pool, companyId, id, agents);
    return id;
  }

  private async chatOf(companyId: string, chatId: string): Promise<Pool> {
    requireUuid(companyId, 'Company');
    requireUuid(chatId, 'Chat');
    const pool = await this.pool();
    if (!(await chatExists(pool, companyId, chatId))) throw notFound('Chat');
    return pool;
  }

  async addFlowSession(companyId: string, chatId: string, b: z.infer<typeof adminFlowSessionBody>) {
    const pool = await this.chatOf(companyId, chatId);
    const status = b.status ?? 'ACTIVE';
    const id = uuidv7();
    await insertFlowSession(pool, {
      id,
      companyId,
      chatId,
      flowId: b.flow_id,
      flowName: b.flow_name,
      status,
      finishedAt: status === 'FINISHED' ? new Date() : null,
      currentStep: b.current_step ?? null,
    });
    return { session_id: id, chat_id: chatId, status };
  }

  async addCopilotAction(companyId: string, chatId: string, b: z.infer<typeof adminCopilotActionBody>) {
    const pool = await this.chatOf(companyId, chatId);
    const id = uuidv7();
    const status = b.status ?? 'PENDING';
    await insertCopilotAction(pool, {
      id,
      companyId,
      chatId,
      executionId: b.execution_id ?? null,
      agentId: b.agent_id ?? null,
      agentName: b.agent_name ?? null,
      actionKey: b.action_key,
      status,
      confidence: b.confidence ?? null,
      requiresReview: b.requires_review ?? true,
      inputPayload: b.input_payload ?? null,
      outputPayload: b.output_payload ?? null,
    });
    return { id, chat_id: chatId, status };
  }
}
