import { invalidField } from '@svc/platform/errors';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { hasAccount, isAgentOfAccount } from '../accounts/account.store.js';
import { phoneVariants } from '../chats/chat.list.js';
import type { ChatActor, ChatService } from '../chats/chat.service.js';
import { assignAgent, chatOfContact, insertChat, newChat } from '../chats/chat.store.js';
import { chatSummaryView } from '../chats/chat.view.js';
import { addParticipant } from '../chats/participant.store.js';
import type { CrmPeople } from '../people/crm-people.js';
import { templateField } from './outbound.schema.js';
import type { MessageSender } from './outbound.sender.js';

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

  /** Synchronous, like a send. */
  async create(actor: ChatActor, b: CreateChatBody, reached: () => void = () => undefined) {
    const pool = await this.pool();
    if (!(await hasAccount(pool, actor.companyId, 'WHATSAPP', b.phone_id)))
      throw invalidField('phone_id', 'no WhatsApp number of the company has this id');
    if (b.assigned_agent_id && !(await isAgentOfAccount(pool, actor.companyId, b.assigned_agent_id, 'WHATSAPP', b.phone_id)))
      throw invalidField('assigned_agent_id', "no agent of the chat's number has this id (an agent id, not a user id)");
    let waId = b.wa_contact_id ?? null;
    let personId: string | null = null;
    if (b.person_contact_id) {
      const found = await this.people.contact(actor.companyId, b.person_contact_id);
      if (!found) throw invalidField('person_contact_id', 'contact not found');
      const digits = found.contact.value.replace(/\D/g, '');
      if (found.contact.type !== PHONE_CONTACT || digits.length < 8 || digits.length > 15)
        throw invalidField('person_contact_id', 'not a phone contact');
      waId = digits;
      personId = found.personId;
    } else {
      personId = await this.people.personByPhone(actor.companyId, phoneVariants(waId!));
    }
    const fresh = newChat({
      id: uuidv7(),
      companyId: actor.companyId,
      channelType: 'WHATSAPP',
      channelAccountId: b.phone_id,
      waContactId: waId,
      contactNumber: `+${waId}`,
      personId,
      assignedAgentId: b.assigned_agent_id ?? null,
      startedBy: 'COMPANY',
    });
    // A chat of the number with this contact already there is reused.
    await insertChat(pool, fresh, true);
    const chatId = (await chatOfContact(pool, 'WHATSAPP', b.phone_id, waId!))!.id;
    if (b.assigned_agent_id) {
      await assignAgent(pool, actor.companyId, chatId, b.assigned_agent_id);
      await addParticipant(pool, actor.companyId, chatId, b.assigned_agent_id);
    }
    const body = { type: 'template' as const, template: b.template, template_fields: b.template_fields };
    const chat = await this.sender.prepare(actor, chatId, body);
    await this.sender.send(actor, chat, body, undefined, reached);
    const after = await this.chats.read(actor.companyId, chatId);
    return chatSummaryView(after, await this.chats.lookups(actor.companyId, [after]));
  }
}
