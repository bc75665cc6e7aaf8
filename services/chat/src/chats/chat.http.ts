import { forbidden } from '@svc/platform/errors';
import { type ApiRequest, type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { hasPermission, type Identity } from '@svc/platform/identity';
import { listMessagesQuery } from '../messages/message.schema.js';
import type { MessageService } from '../messages/message.service.js';
import { scheduledRoutes } from '../scheduled/scheduled.http.js';
import type { ScheduledService } from '../scheduled/scheduled.service.js';
import { chatActionRoutes } from './chat.actions.http.js';
import type { ChatActions } from './chat.actions.js';
import type { ChatCreation } from './chat.create.js';
import { listChatsQuery } from './chat.schema.js';
import type { ChatActor, ChatService } from './chat.service.js';

/** The chat routes' permissions: the spec's names (Authentication, 5), and its pattern where it names none (README). */
export const CHAT_PERMISSIONS = {
  read: 'crm/chats.read',
  create: 'crm/chats.create',
  write: 'crm/chats.write',
  update: 'crm/chats.update',
  delete: 'crm/chats.delete',
  leadUpdate: 'crm/lead.update',
  dealUpdate: 'crm/deal.update',
} as const;

export function actorFor(req: { identity?: Identity }, permission: string): ChatActor {
  const identity = integrationOf(req);
  if (!hasPermission(identity, permission)) throw forbidden(`The key lacks the permission ${permission}`);
  return { companyId: identity.companyId, userId: identity.userId, permissions: (name) => hasPermission(identity, name) };
}

const idOf = (req: ApiRequest) => req.params.id ?? '';

export function chatRoutes(
  chats: ChatService,
  messages: MessageService,
  scheduled: ScheduledService,
  actions: ChatActions,
  creation: ChatCreation,
): ApiRouter {
  const r = apiRouter();
  r.get('/chats', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.read);
    res.json(await chats.list(actor, parse(listChatsQuery, req.query)));
  });
  r.get('/chats/:id', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.read);
    res.json(await chats.detail(actor.companyId, idOf(req)));
  });
  r.get('/chats/:id/assignable-agents', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.read);
    res.json(await chats.assignableAgents(actor.companyId, idOf(req)));
  });
  r.get('/chats/:id/messages', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.read);
    res.json(await messages.list(actor, idOf(req), parse(listMessagesQuery, req.query)));
  });
  scheduledRoutes(r, scheduled);
  chatActionRoutes(r, actions, creation);
  return r;
}
