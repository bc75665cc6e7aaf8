import type { MikroORM } from '@mikro-orm/postgresql';
import { type ApiRequest, type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { requireCompany } from '../companies/company.service.js';
import { need } from '../leads/lead.http.js';
import { adminRouter, companyParam } from '../sales/sales.http.js';
import { attachDocumentBody, createDocumentBody, createProposalBody, listProposalsQuery, updateProposalBody } from './proposal.schema.js';
import type { ProposalActor, Proposals } from './proposal.service.js';

/** The proposal routes' permissions (README, Permissions). */
export const PROPOSAL_PERMISSIONS = { read: 'crm/proposals.read', write: 'crm/proposals.write' } as const;

function actorFor(req: ApiRequest, permission: string): ProposalActor {
  const identity = integrationOf(req);
  need(identity, permission);
  return { companyId: identity.companyId, userId: identity.userId };
}

/**
 * The external proposal routes (served without Express, decision 0014). Uploading a file to a proposal is the files
 * service's route (`POST /proposals/{id}/attachments`, multipart, decision 0078); attaching a library document and
 * removing an attachment are here.
 */
export function proposalRoutes(proposals: Proposals): ApiRouter {
  const r = apiRouter();
  r.get('/proposals', async (req, res) => {
    res.json(await proposals.list(actorFor(req, PROPOSAL_PERMISSIONS.read), parse(listProposalsQuery, req.query)));
  });
  r.post('/proposals', async (req, res) => {
    res.status(201).json(await proposals.create(actorFor(req, PROPOSAL_PERMISSIONS.write), parse(createProposalBody, req.body)));
  });
  r.get('/proposals/:id', async (req, res) => {
    res.json(await proposals.get(actorFor(req, PROPOSAL_PERMISSIONS.read), req.params.id ?? ''));
  });
  r.put('/proposals/:id', async (req, res) => {
    res.json(await proposals.update(actorFor(req, PROPOSAL_PERMISSIONS.write), req.params.id ?? '', parse(updateProposalBody, req.body)));
  });
  r.delete('/proposals/:id', async (req, res) => {
    res.json(await proposals.remove(actorFor(req, PROPOSAL_PERMISSIONS.write), req.params.id ?? ''));
  });
  r.get('/proposals/:id/attachments', async (req, res) => {
    const p = await proposals.get(actorFor(req, PROPOSAL_PERMISSIONS.read), req.params.id ?? '');
    res.json({ records: p.attachments });
  });
  r.post('/proposals/:id/documents', async (req, res) => {
    const { document_id } = parse(attachDocumentBody, req.body);
    res.status(201).json(await proposals.attachDocument(actorFor(req, PROPOSAL_PERMISSIONS.write), req.params.id ?? '', document_id));
  });
  r.delete('/proposals/:id/attachments/:attachmentId', async (req, res) => {
    const actor = actorFor(req, PROPOSAL_PERMISSIONS.write);
    await proposals.detach(actor, req.params.id ?? '', req.params.attachmentId ?? '');
    res.json(await proposals.get(actor, req.params.id ?? ''));
  });
  return r;
}

/** The company's library of proposal documents (management API). */
export function proposalAdminRoutes(orm: MikroORM, proposals: Proposals): Router {
  const r = adminRouter();
  r.post('/companies/:cid/proposal-documents', async (req, res) => {
    const companyId = companyParam(req.params.cid);
    const body = parse(createDocumentBody, req.body);
    await requireCompany(orm.em.fork(), companyId);
    res.status(201).json(await proposals.createDocument(companyId, body));
  });
  return r;
}
