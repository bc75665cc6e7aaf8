import type { ApiRouter } from '@svc/platform/http/api';
import { parse } from '@svc/platform/http/parse';
import { type ChatActions, responsibleBody, templatesQuery, typingBody } from './chat.actions.js';
import { type ChatCreation, createChatBody } from './chat.create.js';
import { actorFor, CHAT_PERMISSIONS } from './chat.http.js';

export function chatActionRoutes(r: ApiRouter, actions: ChatActions, creation: ChatCreation): void {
  r.post('/chats', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.create);
    res.status(201).json(await creation.create(actor, parse(createChatBody, req.body)));
  });
  r.get('/chats/unread-summary', async (req, res) => {
    res.json(await actions.unreadSummary(actorFor(req, CHAT_PERMISSIONS.read)));
  });
  r.patch('/chats/:id/responsible', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.update);
    res.json(await actions.responsible(actor, req.params.id ?? '', parse(responsibleBody, req.body)));
  });
  r.delete('/chats/:id/participants/:userId', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.update);
    res.json(await actions.removeParticipant(actor, req.params.id ?? '', req.params.userId ?? ''));
  });
  r.post('/chats/:id/read', async (req, res) => {
    res.json(await actions.read(actorFor(req, CHAT_PERMISSIONS.update), req.params.id ?? ''));
  });
  r.post('/chats/:id/messages/typing', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.write);
    res.json(await actions.typing(actor, req.params.id ?? '', parse(typingBody, req.body)));
  });
  r.delete('/chats/:id/messages/:messageId', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.delete);
    res.json(await actions.deleteMessage(actor, req.params.id ?? '', req.params.messageId ?? ''));
  });
  r.get('/chats/:id/templates', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.read);
    res.json(await actions.templates(actor, req.params.id ?? '', parse(templatesQuery, req.query)));
  });
}
