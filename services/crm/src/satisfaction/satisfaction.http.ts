import { errorBodyOf, forbidden } from '@svc/platform/errors';
import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf, jsonBody } from '@svc/platform/http/app';
import { toAppError } from '@svc/platform/http/errors';
import { parse } from '@svc/platform/http/parse';
import type { Logger } from '@svc/platform/logging';
import express, { type Request, type Response, Router } from 'express';
import { createSatisfactionLink } from './satisfaction.contract.js';
import { errorPage, formPage, PAGE_HEADERS, thanksPage } from './satisfaction.page.js';
import { submissionBody } from './satisfaction.schema.js';
import { formOf, type Satisfaction } from './satisfaction.service.js';

/** `POST /satisfaction/links` of the external API (permission `crm/satisfaction.write`), described by its contract. */
export function satisfactionRoutes(satisfaction: Satisfaction, publicBaseUrl: string | undefined): ApiRouter {
  return apiRouter().route(createSatisfactionLink, async (req, res, { body }) => {
    const identity = integrationOf(req);
    // Without PUBLIC_BASE_URL the link uses the address the integration called the gateway at.
    const proto = req.header('x-forwarded-proto')?.split(',')[0]?.trim() || 'http';
    const host = req.header('x-forwarded-host')?.split(',')[0]?.trim() || req.header('host') || '127.0.0.1';
    const base = publicBaseUrl?.replace(/\/+$/, '') ?? `${proto}://${host}`;
    res
      .status(201)
      .json(await satisfaction.createLink({ companyId: identity.companyId, userId: identity.userId, keyId: identity.keyId }, body, base));
  });
}

const URLENCODED = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;

/** The HTML form's post is urlencoded; anything else is answered as JSON. */
const wantsHtml = (req: Request) =>
  req.method === 'GET' || req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';

/** Reached only through the gateway's public route; errors keep their status in JSON and HTML alike. */
export function satisfactionPublicRoutes(satisfaction: Satisfaction, logger: Logger): Router {
  const r = Router();
  r.use((req, _res, next) => {
    if (req.identity?.kind !== 'public') throw forbidden('Only the public route serves this form');
    next();
  });
  r.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 10 }));
  r.use(jsonBody('16kb', URLENCODED));
  const fail = (req: Request, res: Response, err: unknown) => {
    const e = toAppError(err, logger, { method: req.method, path: req.path });
    const body = errorBodyOf(e);
    if (wantsHtml(req)) res.status(body.statusCode).set(PAGE_HEADERS).send(errorPage(body.statusCode, body.message));
    else res.status(body.statusCode).json(body);
  };
  r.get('/:token', async (req, res) => {
    try {
      const link = await satisfaction.open(req.params.token);
      res
        .status(200)
        .set(PAGE_HEADERS)
        .send(formPage(formOf(link)));
    } catch (err) {
      fail(req, res, err);
    }
  });
  r.post('/:token', async (req, res) => {
    try {
      const answer = await satisfaction.submit(req.params.token, parse(submissionBody, req.body));
      if (wantsHtml(req)) res.status(201).set(PAGE_HEADERS).send(thanksPage());
      else res.status(201).json(answer);
    } catch (err) {
      fail(req, res, err);
    }
  });
  return r;
}
