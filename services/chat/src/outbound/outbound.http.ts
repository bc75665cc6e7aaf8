import type { IncomingMessage } from 'node:http';
import type { ApiResponse, ApiRouter } from '@svc/platform/http/api';
import { parse } from '@svc/platform/http/parse';
import { actorOf } from '../chats/chat.http.js';
import type { Answer, IdempotentWrites } from '../idempotency/idempotency.js';
import { createChat, sendMessage } from './outbound.contract.js';
import type { ChatCreation } from './outbound.create.js';
import { isMultipart, jsonField, readMultipart } from './outbound.multipart.js';
import { sendMessageBody } from './outbound.schema.js';
import type { MessageSender } from './outbound.sender.js';

export interface OutboundRouteDeps {
  sender: MessageSender;
  creation: ChatCreation;
  idempotent: IdempotentWrites;
}

/** Multipart is read as it arrives, each file streamed on to the provider. */
export function outboundRoutes(r: ApiRouter, d: OutboundRouteDeps): ApiRouter {
  const { sender, creation, idempotent } = d;
  return r
    .route(createChat, async (req, res, { body, headers }) => {
      const a = actorOf(req);
      const answer = await idempotent.once(a.companyId, headers['x-idempotency-key'], 'POST /chats', async (reached) => ({
        status: 201,
        body: await creation.create(a, body, reached),
      }));
      answerOnce(req.raw, res, answer);
    })
    .stream(sendMessage, async (req, res, { params, body: json, headers }) => {
      const a = actorOf(req);
      const operation = `POST /chats/${params.id}/messages`;
      const answer = await idempotent.once(a.companyId, headers['x-idempotency-key'], operation, async (reached) => {
        if (!isMultipart(req.raw)) {
          const chat = await sender.prepareWithoutFiles(a, params.id, json);
          return { status: 201, body: await sender.send(a, chat, json, undefined, reached) };
        }
        const mp = readMultipart(req.raw);
        try {
          const f = await mp.fields;
          const body = parse(sendMessageBody, {
            type: f.type,
            body: f.body,
            template: jsonField(f, 'template'),
            template_fields: jsonField(f, 'template_fields'),
            reference_wamid: f.reference_wamid,
          });
          const chat = await sender.prepare(a, params.id, body);
          return { status: 201, body: await sender.send(a, chat, body, mp.files, reached) };
        } catch (err) {
          mp.drain();
          throw err;
        }
      });
      answerOnce(req.raw, res, answer);
    });
}

/** Answers a write's answer; a replayed one says so, and the body it did not need is read away. */
export function answerOnce(raw: IncomingMessage, res: ApiResponse, answer: Answer & { replayed: boolean }): void {
  if (answer.replayed) {
    res.setHeader('idempotent-replayed', 'true');
    if (!raw.readableEnded) raw.resume();
  }
  res.status(answer.status).json(answer.body);
}
