import type { ApiRouter } from '@svc/platform/http/api';
import { parse } from '@svc/platform/http/parse';
import { actorFor, CHAT_PERMISSIONS } from '../chats/chat.http.js';
import { cancelBody, listScheduledQuery, scheduleBody } from './scheduled.schema.js';
import type { ScheduledService } from './scheduled.service.js';

export function scheduledRoutes(r: ApiRouter, scheduled: ScheduledService): void {
  r.post('/chats/:id/scheduled-messages', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.write);
    res.status(201).json(await scheduled.schedule(actor, req.params.id ?? '', parse(scheduleBody, req.body)));
  });
  r.get('/chats/:id/scheduled-messages', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.read);
    res.json(await scheduled.list(actor, req.params.id ?? '', parse(listScheduledQuery, req.query).status));
  });
  r.post('/chats/:id/scheduled-messages/:sid/cancel', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.write);
    res.json(await scheduled.cancel(actor, req.params.id ?? '', req.params.sid ?? '', parse(cancelBody, req.body).reason));
  });
}
