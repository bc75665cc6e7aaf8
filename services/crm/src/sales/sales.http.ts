import { requireUuid } from '@svc/platform/errors';
import { requireAdmin } from '@svc/platform/http/app';
import { parse, parseQuery } from '@svc/platform/http/parse';
import { type Request, Router } from 'express';
import { z } from 'zod';
import type { SalesRecord } from './sales.entity.js';
import type { SalesService } from './sales.parts.js';
import { customFieldAnswer, idempotencyKey } from './sales.schema.js';
import type { SalesRelations } from './sales.snapshot.js';

export const headerKey = z.object({ 'x-idempotency-key': idempotencyKey().optional() });

export const userId = z.uuid('must be a UUID');
export const uuids = z.array(z.uuid('must be a UUID')).max(50);
export const description = z.string().trim().max(2000).nullable().optional();
const loseBody = z.strictObject({ user_id: userId, loss_reason_ids: uuids.optional(), description });
const moveBody = z.strictObject({ user_id: userId, stage_id: z.uuid('must be a UUID') });
const tagsBody = z.strictObject({ user_id: userId, tag_ids: z.array(z.uuid('must be a UUID')).min(1, 'must name a tag').max(100) });
const answerBody = z.strictObject({ user_id: userId, ...customFieldAnswer.omit({ id: true }).shape });
const qualityBody = z.strictObject({
  user_id: userId,
  quality_rating: z.number().int().min(1, 'must be an integer from 1 to 5').max(5, 'must be an integer from 1 to 5'),
  quality_reason: z.string().trim().max(2000).nullable().optional(),
});
const userQuery = z.object({ user_id: userId });

/** The admin token is required on every route. */
export function adminRouter(): Router {
  const r = Router();
  r.use((req, _res, next) => {
    requireAdmin(req);
    next();
  });
  return r;
}

/** Not a UUID is a 404 (no such company). */
export const companyParam = (cid: string) => requireUuid(cid, 'Company');

export function salesActionRoutes<R extends SalesRecord, Rel extends SalesRelations, S extends { updated_at: string }>(
  r: Router,
  records: SalesService<R, Rel, S, never, never>,
): void {
  const path = `${records.kind}s`;
  const answer = (loaded: { record: R; rel: Rel }) => records.snapshotOf(loaded);
  // Plain strings, so Express types the params as a dictionary.
  const route = (suffix: string): string => `/companies/:cid/${path}/:id${suffix}`;
  const param = (req: Request, name: string) => String(req.params[name]);
  const target = (req: Request) => ({ cid: companyParam(param(req, 'cid')), id: param(req, 'id') });
  r.post(route('/lose'), async (req, res) => {
    const body = parse(loseBody, req.body);
    const { cid, id } = target(req);
    res.json(answer(await records.actions.lose(cid, id, body.user_id, body.loss_reason_ids ?? [], body.description ?? null)));
  });
  r.post(route('/move'), async (req, res) => {
    const body = parse(moveBody, req.body);
    const { cid, id } = target(req);
    res.json(answer(await records.actions.move(cid, id, body.user_id, body.stage_id)));
  });
  r.post(route('/tags'), async (req, res) => {
    const body = parse(tagsBody, req.body);
    const { cid, id } = target(req);
    res.json(answer(await records.actions.addTags(cid, id, body.user_id, body.tag_ids)));
  });
  r.delete(route('/tags/:tagId'), async (req, res) => {
    const { user_id } = parseQuery(userQuery, req.query);
    const { cid, id } = target(req);
    res.json(answer(await records.actions.removeTag(cid, id, user_id, param(req, 'tagId'))));
  });
  r.put(route('/custom-fields/:fieldId'), async (req, res) => {
    const { user_id, ...rest } = parse(answerBody, req.body);
    const { cid, id } = target(req);
    res.json(answer(await records.actions.setCustomField(cid, id, user_id, { id: param(req, 'fieldId'), ...rest })));
  });
  r.delete(route('/custom-fields/:fieldId'), async (req, res) => {
    const { user_id } = parseQuery(userQuery, req.query);
    const { cid, id } = target(req);
    res.json(answer(await records.actions.removeCustomField(cid, id, user_id, param(req, 'fieldId'))));
  });
  r.put(route('/quality'), async (req, res) => {
    const body = parse(qualityBody, req.body);
    const { cid, id } = target(req);
    res.json(answer(await records.actions.setQuality(cid, id, body.user_id, body.quality_rating, body.quality_reason ?? null)));
  });
}
