import type { ApiRouter } from '@svc/platform/http/api';
import { parse } from '@svc/platform/http/parse';
import type { Identity } from '@svc/platform/identity';
import { scheduleMessage } from '../chats/chat.contract.js';
import type { ChatActor } from '../chats/chat.service.js';
import type { IdempotentWrites } from '../idempotency/idempotency.js';
import { answerOnce, isMultipart, jsonField, readMultipart } from '../messages/message.http.js';
import { scheduleBody } from './scheduled.schema.js';
import type { ScheduledService } from './scheduled.service.js';

/**
 * POST /chats/{id}/scheduled-messages: JSON, or multipart whose files are streamed to the scheduled file store as
 * they arrive (decision 0067), never buffered whole.
 */
export function scheduleRoute(
  r: ApiRouter,
  scheduled: ScheduledService,
  actor: (req: { identity?: Identity }) => ChatActor,
  idempotent: IdempotentWrites,
): ApiRouter {
  return r.stream(scheduleMessage, async (req, res, { params, body: json, headers }) => {
    const a = actor(req);
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
  });
}
