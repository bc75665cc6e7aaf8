import type { ApiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { hasPermission, type Identity } from '@svc/platform/identity';
import type { MessageService } from '../messages/message.service.js';
import type { ChatActions } from './chat.actions.js';
import * as c from './chat.contract.js';
import type { ChatActor, ChatService } from './chat.service.js';

/** The key's actor (the key's creator in the key's company); on contract routes the router checked the permission. */
export function actorOf(req: { identity?: Identity }): ChatActor {
  const identity = integrationOf(req);
  return { companyId: identity.companyId, userId: identity.userId, permissions: (name) => hasPermission(identity, name) };
}

export interface ChatRouteDeps {
  chats: ChatService;
  messages: MessageService;
  actions: ChatActions;
}

/** Served without Express (decision 0014). */
export function chatRoutes(r: ApiRouter, d: ChatRouteDeps): ApiRouter {
  return r
    .route(c.listChats, async (req, res, { query }) => res.json(await d.chats.list(actorOf(req), query)))
    .route(c.unreadSummary, async (req, res) => res.json(await d.actions.unreadSummary(actorOf(req))))
    .route(c.getChat, async (req, res, { params }) => res.json(await d.chats.detail(actorOf(req).companyId, params.id)))
    .route(c.assignableAgents, async (req, res, { params }) => res.json(await d.chats.assignableAgents(actorOf(req).companyId, params.id)))
    .route(c.listMessages, async (req, res, { params, query }) => {
      const { companyId } = actorOf(req);
      await d.chats.read(companyId, params.id);
      res.json(await d.messages.list(companyId, params.id, query));
    })
    .route(c.typing, async (req, res, { params, body }) => res.json(await d.actions.typing(actorOf(req), params.id, body)))
    .route(c.deleteMessage, async (req, res, { params }) =>
      res.json(await d.actions.deleteMessage(actorOf(req), params.id, params.messageId)),
    )
    .route(c.readChat, async (req, res, { params }) => res.json(await d.actions.read(actorOf(req), params.id)))
    .route(c.setResponsible, async (req, res, { params, body }) => res.json(await d.actions.responsible(actorOf(req), params.id, body)))
    .route(c.removeParticipant, async (req, res, { params }) =>
      res.json(await d.actions.removeParticipant(actorOf(req), params.id, params.userId)),
    )
    .route(c.listTemplates, async (req, res, { params, query }) => res.json(await d.actions.templates(actorOf(req), params.id, query)));
}
