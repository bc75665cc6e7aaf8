import { invalid } from '@svc/platform/errors';
import { parse } from '@svc/platform/http/parse';
import busboy from 'busboy';
import { type Request, Router } from 'express';
import { actorFor, CHAT_PERMISSIONS } from '../chats/chat.http.js';
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
function readMultipart(req: Request): Multipart {
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

const jsonField = (fields: Record<string, string>, name: string): unknown => {
  const v = fields[name];
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v);
  } catch {
    throw invalid(`${name}: must be JSON in a multipart body`);
  }
};

/** POST /chats/{id}/messages on the Express app: the integration routes' reader takes JSON only, this one streams. */
export function sendRoutes(sender: MessageSender): Router {
  const r = Router();
  r.post('/chats/:id/messages', async (req, res) => {
    const actor = actorFor(req, CHAT_PERMISSIONS.write);
    const chatId = String(req.params.id);
    if (!req.is('multipart/form-data')) {
      const body = parse(sendMessageBody, req.body);
      const chat = await sender.prepare(actor, chatId, body);
      res.status(201).json(await sender.send(actor, chat, body));
      return;
    }
    const mp = readMultipart(req);
    try {
      const f = await mp.fields;
      const body = parse(sendMessageBody, {
        type: f.type,
        body: f.body,
        template: jsonField(f, 'template'),
        template_fields: jsonField(f, 'template_fields'),
        reference_wamid: f.reference_wamid,
      });
      const chat = await sender.prepare(actor, chatId, body);
      res.status(201).json(await sender.send(actor, chat, body, mp.files));
    } catch (err) {
      mp.drain();
      throw err;
    }
  });
  return r;
}
