import { parse } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { adminChatBody, adminCopilotActionBody, adminFlowSessionBody, type ChatAdmin } from './chat.admin.js';
import type { ChatService } from './chat.service.js';

/** The chat rows of the management API (shared/design/admin-api.md), on the admin router the service mounts. */
export function chatAdminRoutes(r: Router, admin: ChatAdmin, chats: ChatService): Router {
  r.post('/companies/:cid/chats', async (req, res) => {
    const id = await admin.createChat(req.params.cid, parse(adminChatBody, req.body));
    res.status(201).json(await chats.detail(req.params.cid, id));
  });
  r.post('/companies/:cid/chats/:id/flow-sessions', async (req, res) => {
    res.status(201).json(await admin.addFlowSession(req.params.cid, req.params.id, parse(adminFlowSessionBody, req.body)));
  });
  r.post('/companies/:cid/chats/:id/copilot-actions', async (req, res) => {
    res.status(201).json(await admin.addCopilotAction(req.params.cid, req.params.id, parse(adminCopilotActionBody, req.body)));
  });
  return r;
}
