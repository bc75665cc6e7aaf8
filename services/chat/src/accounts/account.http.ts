import { parse } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { createAgentBody, createInstagramAccountBody, createTemplateBody, createWhatsappNumberBody } from './account.schema.js';
import type { AccountService } from './account.service.js';

/** The numbers, accounts, agents and templates of the management API, on the admin router the service mounts. */
export function accountAdminRoutes(r: Router, accounts: AccountService): Router {
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
  return r;
}
