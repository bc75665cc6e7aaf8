import type { IncomingMessage } from 'node:http';
import { invalid } from '@svc/platform/errors';
import type { ApiRouter } from '@svc/platform/http/api';
import { parse } from '@svc/platform/http/parse';
import type { Identity } from '@svc/platform/identity';
import busboy from 'busboy';
import { sendMessage } from '../chats/chat.contract.js';
import type { ChatActor } from '../chats/chat.service.js';
import type { IncomingFile, MessageSender } from './message.send.js';
import { FILE_LIMIT_BYTES, sendMessageBody } from './send.schema.js';

interface Multipart {
  /** Resolves once the fields before the first file (or all of them) have arrived. */
  fields: Promise<Record<string, string>>;
  files: AsyncIterable<IncomingFile>;
  /** Reads whatever is left of the request and throws nothing (after a refusal). */
  drain(): void;
}

/**
 * A multipart body read as it arrives (busboy): fields first, then each file handed on as a stream the moment it
 * starts, never buffered. Fields sent after a file are not seen (the README says to send fields first).
 */
export function readMultipart(req: IncomingMessage): Multipart {
  const bb = busboy({ headers: req.headers, limits: { fileSize: FILE_LIMIT_BYTES + 1, files: 10, fields: 20, fieldSize: 64 * 1024 } });
  const fields: Record<string, string> = {};
  const queue: IncomingFile[] = [];
  let done = false;
  let failure: Error | null = null;
  let draining = false;
  let wake: (() => void) | null = null;
  let fieldsReady!: (f: Record<string, string>) => void;
  const fieldsPromise = new Promise<Record<string, string>>((r) => (fieldsReady = r));
  const poke = () => {
    fieldsReady(fields);
    wake?.();
  };
  bb.on('field', (name, value) => {
    fields[name] = value;
  });
  bb.on('file', (_name, stream, info) => {
    if (draining) return void stream.resume();
    queue.push({ stream, fileName: info.filename ?? 'file', mimeType: info.mimeType });
    poke();
  });
  bb.on('close', () => {
    done = true;
    poke();
  });
  bb.on('error', (err) => {
    failure = err instanceof Error ? err : new Error(String(err));
    poke();
  });
  req.pipe(bb);
  return {
    fields: fieldsPromise,
    files: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const next = queue.shift();
          if (next) {
            yield next;
            continue;
          }
          if (failure) throw invalid(`body: malformed multipart (${(failure as Error).message})`);
          if (done) return;
          await new Promise<void>((r) => (wake = r));
          wake = null;
        }
      },
    },
    drain: () => {
      draining = true;
      for (const f of queue.splice(0)) f.stream.resume();
    },
  };
}

export const jsonField = (fields: Record<string, string>, name: string): unknown => {
  const v = fields[name];
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v);
  } catch {
    throw invalid(`${name}: must be JSON in a multipart body`);
  }
};

export const isMultipart = (req: IncomingMessage) => /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');

/**
 * POST /chats/{id}/messages: JSON, or multipart read as it arrives and each file streamed on to the provider
 * (`ApiRouter.stream` leaves a multipart body unread for this handler).
 */
export function sendRoute(r: ApiRouter, sender: MessageSender, actor: (req: { identity?: Identity }) => ChatActor): ApiRouter {
  return r.stream(sendMessage, async (req, res, { params, body: json }) => {
    const a = actor(req);
    if (!isMultipart(req.raw)) {
      const chat = await sender.prepare(a, params.id, json);
      res.status(201).json(await sender.send(a, chat, json));
      return;
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
      res.status(201).json(await sender.send(a, chat, body, mp.files));
    } catch (err) {
      mp.drain();
      throw err;
    }
  });
}
