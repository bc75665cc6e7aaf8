import type { ApiRouter } from '@svc/platform/http/api';
import { parse } from '@svc/platform/http/parse';
import { actorOf } from '../chats/chat.http.js';
import type { IdempotentWrites } from '../idempotency/idempotency.js';
import { answerOnce } from '../outbound/outbound.http.js';
import { isMultipart, jsonField, readMultipart } from '../outbound/outbound.multipart.js';
import { cancelScheduled, listScheduled, scheduleMessage } from './scheduled.contract.js';
import { scheduleBody } from './scheduled.schema.js';
import type { ScheduledService } from './scheduled.service.js';

/** Multipart files are streamed to the file store as they arrive (decision 0067). */
export function scheduledRoutes(r: ApiRouter, scheduled: ScheduledService, idempotent: IdempotentWrites): ApiRouter {
  return r
    .stream(scheduleMessage, async (req, res, { params, body: json, headers }) => {
      const a = actorOf(req);
      const operation = `POST /chats/${params.id}/scheduled-messages`;
      // Scheduling sends nothing: a failure frees the key whatever stage it reached.
      const answer = await idempotent.once(a.companyId, headers['x-idempotency-key'], operation, async () => {
        if (!isMultipart(req.raw)) return { status: 201, body: await scheduled.schedule(a, params.id, json) };
        const mp = readMultipart(req.raw);
        try {
          const f = await mp.fields;
          const body = parse(scheduleBody, {
            scheduled_at: f.scheduled_at,
            type: f.type,
            body: f.body,
            template: jsonField(f, 'template'),
            template_fields: jsonField(f, 'template_fields'),
            reference_wamid: f.reference_wamid,
            cancel_on_inbound: jsonField(f, 'cancel_on_inbound'),
          });
          return { status: 201, body: await scheduled.schedule(a, params.id, body, mp.files) };
        } catch (err) {
          mp.drain();
          throw err;
        }
      });
      answerOnce(req.raw, res, answer);
    })
    .route(listScheduled, async (req, res, { params, query }) => res.json(await scheduled.list(actorOf(req), params.id, query)))
    .route(cancelScheduled, async (req, res, { params, body }) =>
      res.json(await scheduled.cancel(actorOf(req), params.id, params.sid, body.reason)),
    );
}
