import { type ApiRequest, type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { adminRouter, companyParam } from '../sales/sales.http.js';
import {
  attachProposalDocument,
  createProposal,
  deleteProposal,
  getProposal,
  listProposalAttachments,
  listProposals,
  removeProposalAttachment,
  updateProposal,
} from './proposal.contract.js';
import { createDocumentBody } from './proposal.schema.js';
import type { ProposalActor, Proposals } from './proposal.service.js';

/** Served without Express (decision 0014); file uploads are the files service's route (decision 0078). */
export function proposalRoutes(proposals: Proposals): ApiRouter {
  const actor = (req: ApiRequest): ProposalActor => {
    const identity = integrationOf(req);
    return { companyId: identity.companyId, userId: identity.userId };
  };
  return apiRouter()
    .route(listProposals, async (req, res, { query }) => {
      res.json(await proposals.list(actor(req), query));
    })
    .route(createProposal, async (req, res, { body }) => {
      res.status(201).json(await proposals.create(actor(req), body));
    })
    .route(getProposal, async (req, res, { params }) => {
      res.json(await proposals.get(actor(req), params.id));
    })
    .route(updateProposal, async (req, res, { params, body }) => {
      res.json(await proposals.update(actor(req), params.id, body));
    })
    .route(deleteProposal, async (req, res, { params }) => {
      res.json(await proposals.remove(actor(req), params.id));
    })
    .route(listProposalAttachments, async (req, res, { params }) => {
      res.json({ records: (await proposals.get(actor(req), params.id)).attachments });
    })
    .route(attachProposalDocument, async (req, res, { params, body }) => {
      res.status(201).json(await proposals.attachDocument(actor(req), params.id, body.document_id));
    })
    .route(removeProposalAttachment, async (req, res, { params }) => {
      const a = actor(req);
      await proposals.detach(a, params.id, params.attachmentId);
      res.json(await proposals.get(a, params.id));
    });
}

/** The company's library of proposal documents (management API). */
export function proposalAdminRoutes(proposals: Proposals): Router {
  const r = adminRouter();
  r.post('/companies/:cid/proposal-documents', async (req, res) => {
    const companyId = companyParam(req.params.cid);
    const body = parse(createDocumentBody, req.body);
    res.status(201).json(await proposals.createDocument(companyId, body));
  });
  return r;
}
