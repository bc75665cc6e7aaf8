import { isUuid } from '@svc/platform/errors';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import { ChatLinkServiceService, type PersonChat } from '@svc/proto/chat/v1/chat';
import type { Pool } from 'pg';

const PERSON_CHATS_SQL = `
select c.id as chat_id, c.person_id, c.channel_account_id, c.chat_type, c.channel_type, c.unread_count,
  coalesce(c.remote_profile_name, c.contact_name, c.external_contact_display_name, c.external_contact_handle, c.contact_number, '') as title,
  coalesce(n.verified_name, n.display_number, i.display_name, '') as channel_account_name,
  n.verified_name as whatsapp_number_verified_name,
  coalesce(c.wa_contact_id, c.external_contact_id) as external_contact_id,
  coalesce(c.contact_number, c.external_contact_handle) as external_contact_handle,
  a.user_id as responsible_user_id, c.status,
  case when n.id is null then null else json_build_object('id', n.id, 'display_number', n.display_number, 'raw_number', n.raw_number,
    'phone_number_id', n.phone_number_id) end as whatsapp_number,
  c.wa_contact_id, c.contact_name, c.contact_number, c.remote_profile_name
from chats c
left join whatsapp_numbers n on c.channel_type = 'WHATSAPP' and n.id = c.channel_account_id
left join instagram_accounts i on c.channel_type = 'INSTAGRAM' and i.id = c.channel_account_id
left join agents a on a.id = c.assigned_agent_id
where c.company_id = $1 and c.person_id = any($2::uuid[]) and c.archived_at is null
order by c.last_activity_at desc, c.id desc limit 200`;

/** chat.v1.ChatLinkService: the chats of persons, for the chat fields of crm's details and lead and deal events. */
export function chatLinkGrpc(pool: () => Promise<Pool>, logger: Logger): GrpcServiceRegistration {
  return {
    definition: ChatLinkServiceService,
    implementation: {
      getPersonChats: unary(logger, async (req) => {
        const ids = req.person_ids.filter(isUuid);
        if (!isUuid(req.company_id) || !ids.length) return { chats: [] };
        const { rows } = await (await pool()).query({ name: 'person_chats', text: PERSON_CHATS_SQL, values: [req.company_id, ids] });
        const opt = (v: string | null) => v ?? undefined;
        const chats: PersonChat[] = rows.map((r) => ({
          ...r,
          whatsapp_number_verified_name: opt(r.whatsapp_number_verified_name),
          external_contact_id: opt(r.external_contact_id),
          external_contact_handle: opt(r.external_contact_handle),
          responsible_user_id: opt(r.responsible_user_id),
          whatsapp_number: opt(r.whatsapp_number),
          wa_contact_id: opt(r.wa_contact_id),
          contact_name: opt(r.contact_name),
          contact_number: opt(r.contact_number),
          remote_profile_name: opt(r.remote_profile_name),
        }));
        return { chats };
      }),
    },
  };
}
