import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { hasPermission, type Identity } from '@svc/platform/identity';
import type { IdempotentWrites } from '../idempotency/idempotency.js';
import { answerOnce, sendRoute } from '../messages/message.http.js';
import type { MessageSender } from '../messages/message.send.js';
import type { MessageService } from '../messages/message.service.js';
import { scheduleRoute } from '../scheduled/scheduled.http.js';
import type { ScheduledService } from '../scheduled/scheduled.service.js';
import type { ChatActions } from './chat.actions.js';
import * as c from './chat.contract.js';
import type { ChatCreation } from './chat.create.js';
import type { ChatActor, ChatService } from './chat.service.js';

/** The key's actor (the key's creator in the key's company); on contract routes the router checked the permission. */
function actor(req: { identity?: Identity }): ChatActor {
  const identity = integrationOf(req);
  return { companyId: identity.companyId, userId: identity.userId, permissions: (name) => hasPermission(identity, name) };
}

export interface ChatRouteDeps {
  chats: ChatService;
  messages: MessageService;
  scheduled: ScheduledService;
  actions: ChatActions;
  creation: ChatCreation;
  sender: MessageSender;
  idempotent: IdempotentWrites;
}

/** The external chat routes (served without Express, decision 0014), described by their contracts (decision 0100). */
export function chatRoutes(d: ChatRouteDeps): ApiRouter {
  return scheduleRoute(sendRoute(apiRouter(), d.sender, actor, d.idempotent), d.scheduled, actor, d.idempotent)
    .route(c.listChats, async (req, res, { query }) => res.json(await d.chats.list(actor(req), query)))
    .route(c.createChat, async (req, res, { body, headers }) => {
      const a = actor(req);
      const answer = await d.idempotent.once(a.companyId, headers['x-idempotency-key'], 'POST /chats', async (reached) => ({
        status: 201,
        body: await d.creation.create(a, body, reached),
      }));
      answerOnce(req.raw, res, answer);
    })
    .route(c.unreadSummary, async (req, res) => res.json(await d.actions.unreadSummary(actor(req))))
    .route(c.getChat, async (req, res, { params }) => res.json(await d.chats.detail(actor(req).companyId, params.id)))
    .route(c.assignableAgents, async (req, res, { params }) => res.json(await d.chats.assignableAgents(actor(req).companyId, params.id)))
    .route(c.listMessages, async (req, res, { params, query }) => res.json(await d.messages.list(actor(req), params.id, query)))
    .route(c.typing, async (req, res, { params, body }) => res.json(await d.actions.typing(actor(req), params.id, body)))
    .route(c.deleteMessage, async (req, res, { params }) =>
      res.json(await d.actions.deleteMessage(actor(req), params.id, params.messageId)),
    )
    .route(c.readChat, async (req, res, { params }) => res.json(await d.actions.read(actor(req), params.id)))
    .route(c.setResponsible, async (req, res, { params, body }) => res.json(await d.actions.responsible(actor(req), params.id, body)))
    .route(c.removeParticipant, async (req, res, { params }) =>
      res.json(await d.actions.removeParticipant(actor(req), params.id, params.userId)),
    )
    .route(c.listTemplates, async (req, res, { params, query }) => res.json(await d.actions.templates(actor(req), params.id, query)))
    .route(c.listScheduled, async (req, res, { params, query }) => res.json(await d.scheduled.list(actor(req), params.id, query)))
    .route(c.cancelScheduled, async (req, res, { params, body }) =>
      res.json(await d.scheduled.cancel(actor(req), params.id, params.sid, body.reason)),
    );
}
