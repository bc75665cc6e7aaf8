import { isUuid } from '@svc/platform/errors';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import { ChatLinkServiceService, type PersonChat } from '@svc/proto/chat/v1/chat';
import type { Pool } from 'pg';
import { personChats } from './chat.store.js';

/** chat.v1.ChatLinkService: the chats of persons, for the chat fields of crm's details and lead and deal events. */
export function chatLinkGrpc(pool: () => Promise<Pool>, logger: Logger): GrpcServiceRegistration {
  return {
    definition: ChatLinkServiceService,
    implementation: {
      getPersonChats: unary(logger, async (req) => {
        const ids = req.person_ids.filter(isUuid);
        if (!isUuid(req.company_id) || !ids.length) return { chats: [] };
        const rows = await personChats(await pool(), req.company_id, ids);
        const opt = <T>(v: T | null) => v ?? undefined;
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
