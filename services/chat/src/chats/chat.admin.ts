import { conflict, invalidField, notFound, requireUuid } from '@svc/platform/errors';
import { intField } from '@svc/platform/numbers';
import type { CrmPeer } from '@svc/platform/peers/crm';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { CHAT_STATUSES } from './chat.schema.js';

const uuid = z.uuid('must be a UUID');
const when = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a zone' });

/**
 * POST /admin/v1/companies/{cid}/chats: a chat as it stands, for operators' imports, the demo seed and tests (the
 * external API only creates WhatsApp chats, by sending a template; Instagram chats otherwise only arrive inbound).
 */
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
    const table = whatsapp ? 'whatsapp_numbers' : 'instagram_accounts';
    const found = await pool.query(`select 1 from ${table} where company_id = $1 and id = $2`, [companyId, accountId]);
    if (!found.rowCount) throw invalidField(whatsapp ? 'whatsapp_number_id' : 'instagram_account_id', 'not found');
    const agents = [...new Set([...(b.participant_agent_ids ?? []), ...(b.assigned_agent_id ? [b.assigned_agent_id] : [])])];
    const known = await pool.query('select id from agents where company_id = $1 and id = any($2::uuid[])', [companyId, agents]);
    if (known.rowCount !== agents.length) throw invalidField('assigned_agent_id', 'agent not found');
    const id = uuidv7();
    const now = new Date();
    const activity = b.last_activity_at ? new Date(b.last_activity_at) : now;
    try {
      await pool.query(
        `insert into chats (id, company_id, channel_type, chat_type, channel_account_id, wa_contact_id, contact_name, contact_number,
           remote_profile_name, external_contact_id, external_contact_handle, external_contact_display_name, external_contact_avatar_url,
           person_id, status, priority, unread_count, is_manually_unread, archived_at, last_customer_msg_at, last_activity_at,
           assigned_agent_id, started_by, trailing_outbound_count, ai_message_count, created_at, updated_at)
         values ($1, $2, $3, 'INDIVIDUAL', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, 0, $24, $24)`,
        [
          id,
          companyId,
          b.channel_type,
          accountId,
          b.wa_contact_id ?? null,
          b.contact_name ?? null,
          b.wa_contact_id ? `+${b.wa_contact_id}` : null,
          b.remote_profile_name ?? null,
          b.external_contact?.id ?? null,
          b.external_contact?.handle ?? null,
          b.external_contact?.display_name ?? null,
          b.external_contact?.avatar_url ?? null,
          b.person_id ?? null,
          b.status ?? 'OPEN',
          b.priority ?? 1,
          b.unread_count ?? 0,
          b.is_manually_unread ?? false,
          b.archived ? now : null,
          b.last_customer_msg_at ? new Date(b.last_customer_msg_at) : null,
          activity,
          b.assigned_agent_id ?? null,
          b.started_by ?? null,
          b.trailing_outbound_count ?? 0,
          now,
        ],
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('the account already has a chat with this contact');
      throw err;
    }
    if (agents.length)
      await pool.query(
        `insert into chat_participants (chat_id, agent_id, company_id, created_at) select $1, a, $2, now() from unnest($3::uuid[]) a`,
        [id, companyId, agents],
      );
    return id;
  }

  private async chatOf(companyId: string, chatId: string): Promise<Pool> {
    requireUuid(companyId, 'Company');
    requireUuid(chatId, 'Chat');
    const pool = await this.pool();
    const found = await pool.query('select 1 from chats where company_id = $1 and id = $2', [companyId, chatId]);
    if (!found.rowCount) throw notFound('Chat');
    return pool;
  }

  async addFlowSession(companyId: string, chatId: string, b: z.infer<typeof adminFlowSessionBody>) {
    const pool = await this.chatOf(companyId, chatId);
    const status = b.status ?? 'ACTIVE';
    const { rows } = await pool.query(
      `insert into flow_sessions (id, company_id, chat_id, flow_id, flow_name, status, started_at, last_activity_at, finished_at, current_step)
       values ($1, $2, $3, $4, $5, $6, now(), now(), $7, $8) returning id`,
      [uuidv7(), companyId, chatId, b.flow_id, b.flow_name, status, status === 'FINISHED' ? new Date() : null, b.current_step ?? null],
    );
    return { session_id: rows[0].id, chat_id: chatId, status };
  }

  async addCopilotAction(companyId: string, chatId: string, b: z.infer<typeof adminCopilotActionBody>) {
    const pool = await this.chatOf(companyId, chatId);
    const { rows } = await pool.query(
      `insert into copilot_actions (id, company_id, chat_id, execution_id, agent_id, agent_name, action_key, status, confidence,
         requires_review, input_payload, output_payload, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now(), now()) returning id, status`,
      [
        uuidv7(),
        companyId,
        chatId,
        b.execution_id ?? null,
        b.agent_id ?? null,
        b.agent_name ?? null,
        b.action_key,
        b.status ?? 'PENDING',
        b.confidence ?? null,
        b.requires_review ?? true,
        b.input_payload ?? null,
        b.output_payload ?? null,
      ],
    );
    return { id: rows[0].id, chat_id: chatId, status: rows[0].status };
  }
}
