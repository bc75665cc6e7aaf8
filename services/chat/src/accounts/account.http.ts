import { requireAdmin } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { Router } from 'express';
import { adminChatBody, adminCopilotActionBody, adminFlowSessionBody, type ChatAdmin } from '../chats/chat.admin.js';
import type { ChatService } from '../chats/chat.service.js';
import { adminInboundBody, deliverInbound } from '../inbound/inbound.admin.js';
import type { ChatInbound } from '../inbound/inbound.sink.js';
import { createAgentBody, createInstagramAccountBody, createTemplateBody, createWhatsappNumberBody } from './account.schema.js';
import type { AccountService } from './account.service.js';

/** The chat rows of the management API (shared/design/admin-api.md). */
export function chatAdminRoutes(accounts: AccountService, admin: ChatAdmin, chats: ChatService, inbound: ChatInbound): Router {
  const r = Router();
  r.use((req, _res, next) => {
    requireAdmin(req);
    next();
  });
  r.post('/companies/:cid/whatsapp-numbers', async (req, res) => {
    res.status(201).json(await accounts.createNumber(req.params.cid, parse(createWhatsappNumberBody, req.body)));
  });
  r.post('/companies/:cid/instagram-accounts', async (req, res) => {
    res.status(201).json(await accounts.createInstagram(req.params.cid, parse(createInstagramAccountBody, req.body)));
  });
  r.post('/companies/:cid/agents', async (req, res) => {
    res.status(201).json(await accounts.createAgent(req.params.cid, parse(createAgentBody, req.body)));
  });
  r.post('/companies/:cid/message-templates', async (req, res) => {
    res.status(201).json(await accounts.createTemplate(req.params.cid, parse(createTemplateBody, req.body)));
  });
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
  r.post('/companies/:cid/chats/:id/inbound', async (req, res) => {
    res.status(201).json(await deliverInbound(chats, inbound, req.params.cid, req.params.id, parse(adminInboundBody, req.body)));
  });
  return r;
}
