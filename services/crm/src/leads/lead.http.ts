import { forbidden, invalid, requireUuid } from '@svc/platform/errors';
import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf, requireAdmin } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { hasPermission, type Identity } from '@svc/platform/identity';
import { Router } from 'express';
import { z } from 'zod';
import { createLeadBody, customFieldAnswer, idempotencyKey, listLeadsQuery, updateLeadBody } from './lead.schema.js';
import type { Leads, LoadedLead } from './lead.service.js';

export const need = (identity: Identity, permission: string) => {
  if (!hasPermission(identity, permission)) throw forbidden(`The key lacks the permission ${permission}`);
};

export const headerKey = z.object({ 'x-idempotency-key': idempotencyKey().optional() });

/** The external lead routes (served without Express, decision 0014). */
export function leadRoutes(leads: Leads): ApiRouter {
  const r = apiRouter();
  r.post('/leads', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.create');
    const body = parse(createLeadBody, req.body);
    const key = parse(headerKey, { 'x-idempotency-key': req.header('x-idempotency-key') })['x-idempotency-key'];
    res.status(201).json(await leads.create(identity, body, key));
  });
  r.get('/leads', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.read');
    res.json(await leads.list(identity, parse(listLeadsQuery, req.query)));
  });
  r.get('/leads/:ref', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.read');
    res.json(await leads.detail(identity, req.params.ref ?? ''));
  });
  r.put('/leads/:ref', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.update');
    res.json(await leads.update(identity, req.params.ref ?? '', parse(updateLeadBody, req.body)));
  });
  return r;
}

const userId = z.uuid('must be a UUID');
const winBody = z.strictObject({
  user_id: userId,
  deal: z.strictObject({ title: z.string().trim().min(1).max(150), value: z.number().nonnegative().optional() }).optional(),
});
const loseBody = z.strictObject({
  user_id: userId,
  loss_reason_ids: z.array(z.uuid('must be a UUID')).max(50).optional(),
  description: z.string().trim().max(2000).nullable().optional(),
});
const moveBody = z.strictObject({ user_id: userId, stage_id: z.uuid('must be a UUID') });
const tagsBody = z.strictObject({ user_id: userId, tag_ids: z.array(z.uuid('must be a UUID')).min(1, 'must name a tag').max(100) });
const answerBody = z.strictObject({ user_id: userId, ...customFieldAnswer.omit({ id: true }).shape });
const qualityBody = z.strictObject({
  user_id: userId,
  quality_rating: z.number().int().min(1, 'must be an integer from 1 to 5').max(5, 'must be an integer from 1 to 5'),
  quality_reason: z.string().trim().max(2000).nullable().optional(),
});
const userQuery = z.object({ user_id: userId });

/** The CRM's dedicated lead actions of the management API (admin-api.md); each answers the LeadSnapshot. */
export function leadAdminRoutes(leads: Leads): Router {
  const r = Router();
  r.use((req, _res, next) => {
    requireAdmin(req);
    next();
  });
  const answer = (loaded: LoadedLead) => leads.snapshotOf(loaded);
  const company = (cid: string) => requireUuid(cid, 'Company');
  r.post('/companies/:cid/leads/:id/win', async (req, res) => {
    const body = parse(winBody, req.body);
    if (body.deal) throw invalid('deal: deals are not available yet; win the lead without one');
    res.json(answer(await leads.win(company(req.params.cid), req.params.id, body.user_id)));
  });
  r.post('/companies/:cid/leads/:id/lose', async (req, res) => {
    const body = parse(loseBody, req.body);
    res.json(
      answer(await leads.lose(company(req.params.cid), req.params.id, body.user_id, body.loss_reason_ids ?? [], body.description ?? null)),
    );
  });
  r.post('/companies/:cid/leads/:id/move', async (req, res) => {
    const body = parse(moveBody, req.body);
    res.json(answer(await leads.move(company(req.params.cid), req.params.id, body.user_id, body.stage_id)));
  });
  r.post('/companies/:cid/leads/:id/tags', async (req, res) => {
    const body = parse(tagsBody, req.body);
    res.json(answer(await leads.addTags(company(req.params.cid), req.params.id, body.user_id, body.tag_ids)));
  });
  r.delete('/companies/:cid/leads/:id/tags/:tagId', async (req, res) => {
    const { user_id } = parse(userQuery, req.query);
    res.json(answer(await leads.removeTag(company(req.params.cid), req.params.id, user_id, req.params.tagId)));
  });
  r.put('/companies/:cid/leads/:id/custom-fields/:fieldId', async (req, res) => {
    const { user_id, ...rest } = parse(answerBody, req.body);
    res.json(answer(await leads.setCustomField(company(req.params.cid), req.params.id, user_id, { id: req.params.fieldId, ...rest })));
  });
  r.delete('/companies/:cid/leads/:id/custom-fields/:fieldId', async (req, res) => {
    const { user_id } = parse(userQuery, req.query);
    res.json(answer(await leads.removeCustomField(company(req.params.cid), req.params.id, user_id, req.params.fieldId)));
  });
  r.put('/companies/:cid/leads/:id/quality', async (req, res) => {
    const body = parse(qualityBody, req.body);
    res.json(
      answer(
        await leads.setQuality(company(req.params.cid), req.params.id, body.user_id, body.quality_rating, body.quality_reason ?? null),
      ),
    );
  });
  return r;
}
