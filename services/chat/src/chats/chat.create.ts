import { invalid } from '@svc/platform/errors';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import type { MessageSender } from '../messages/message.send.js';
import type { CrmPeople } from '../people/crm-people.js';
import { phoneVariants } from './chat.list.js';
import type { ChatActor, ChatService } from './chat.service.js';
import { chatSummaryView } from './chat.view.js';

const templateField = z.strictObject({
  component: z.string().min(1).max(20),
  type: z.string().min(1).max(20).optional(),
  value: z.string().max(4096),
  index: z.number().int().min(0).max(100).optional(),
  button_index: z.number().int().min(0).max(10).optional(),
  card_index: z.number().int().min(0).max(10).optional(),
});

/** POST /chats (CreateExternalChat): a contact by WhatsApp id or by crm contact id, a number, the initial template. */
export const createChatBody = z
  .strictObject({
    phone_id: z.uuid('must be a UUID'),
    wa_contact_id: z
      .string()
      .regex(/^\d{8,15}$/, 'must be 8 to 15 digits')
      .optional(),
    person_contact_id: z.uuid('must be a UUID').optional(),
    template: z.strictObject({ name: z.string().min(1).max(512), language: z.string().min(2).max(20) }),
    template_fields: z.array(templateField).max(100).optional(),
    assigned_agent_id: z.uuid('must be a UUID').optional(),
  })
  .superRefine((b, ctx) => {
    if ((b.wa_contact_id === undefined) === (b.person_contact_id === undefined))
      ctx.addIssue({ code: 'custom', path: ['wa_contact_id'], message: 'send exactly one of wa_contact_id and person_contact_id' });
  });
export type CreateChatBody = z.infer<typeof createChatBody>;

/** Phone contacts (crm type 2) are the WhatsApp ones. */
const PHONE_CONTACT = 2;

export class ChatCreation {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly chats: ChatService,
    private readonly people: CrmPeople,
    private readonly sender: MessageSender,
  ) {}

  /** Creates the chat of the contact on the number or reuses it, then sends the template (synchronously, like a send). */
  async create(actor: ChatActor, b: CreateChatBody, reached: () => void = () => undefined) {
    const pool = await this.pool();
    const number = await pool.query('select id from whatsapp_numbers where company_id = $1 and id = $2', [actor.companyId, b.phone_id]);
    if (!number.rowCount) throw invalid('phone_id: no WhatsApp number of the company has this id');
    if (b.assigned_agent_id) {
      const agent = await pool.query('select 1 from agents where company_id = $1 and id = $2 and $3::uuid = any(whatsapp_number_ids)', [
        actor.companyId,
        b.assigned_agent_id,
        b.phone_id,
      ]);
      if (!agent.rowCount) throw invalid("assigned_agent_id: no agent of the chat's number has this id (an agent id, not a user id)");
    }
    let waId = b.wa_contact_id ?? null;
    let personId: string | null = null;
    if (b.person_contact_id) {
      const found = await this.people.contact(actor.companyId, b.person_contact_id);
      if (!found) throw invalid('person_contact_id: contact not found');
      const digits = found.contact.value.replace(/\D/g, '');
      if (found.contact.type !== PHONE_CONTACT || digits.length < 8 || digits.length > 15)
        throw invalid('person_contact_id: not a phone contact');
      waId = digits;
      personId = found.personId;
    } else {
      personId = await this.people.personByPhone(actor.companyId, phoneVariants(waId!));
    }
    const now = new Date();
    await pool.query(
      `insert into chats (id, company_id, channel_type, chat_type, channel_account_id, wa_contact_id, contact_number, person_id, status, priority,
         unread_count, is_manually_unread, last_activity_at, assigned_agent_id, started_by, trailing_outbound_count, ai_message_count, created_at, updated_at)
       values ($1, $2, 'WHATSAPP', 'INDIVIDUAL', $3, $4, $5, $6, 'OPEN', 1, 0, false, $7, $8, 'COMPANY', 0, 0, $7, $7) on conflict do nothing`,
      [uuidv7(), actor.companyId, b.phone_id, waId, `+${waId}`, personId, now, b.assigned_agent_id ?? null],
    );
    const { rows } = await pool.query<{ id: string }>('select id from chats where channel_account_id = $1 and wa_contact_id = $2', [
      b.phone_id,
      waId,
    ]);
    const chatId = rows[0]!.id;
    if (b.assigned_agent_id) {
      await pool.query('update chats set assigned_agent_id = $2 where id = $1', [chatId, b.assigned_agent_id]);
      await pool.query(
        'insert into chat_participants (chat_id, agent_id, company_id, created_at) values ($1, $2, $3, now()) on conflict do nothing',
        [chatId, b.assigned_agent_id, actor.companyId],
      );
    }
    const body = { type: 'template' as const, template: b.template, template_fields: b.template_fields };
    const chat = await this.sender.prepare(actor, chatId, body);
    await this.sender.send(actor, chat, body, undefined, reached);
    const after = await this.chats.read(actor.companyId, chatId);
    return chatSummaryView(after, await this.chats.lookups(actor.companyId, [after]));
  }
}
