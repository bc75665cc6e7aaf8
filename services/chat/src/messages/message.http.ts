import type { IncomingMessage } from 'node:http';
import { invalidField } from '@svc/platform/errors';
import type { ApiRouter } from '@svc/platform/http/api';
import { checkFormField, checkFormText, checkText } from '@svc/platform/http/body';
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
 * starts, never buffered. Fields sent after a file are not seen (the README says to send fields first). The text of
 * the fields and file names follows the platform's rule for multipart text (decision 0135): a field that breaks it
 * rejects `fields`; a file name that breaks it rejects `fields` when it is the first file, else ends `files`.
 */
export function readMultipart(req: IncomingMessage): Multipart {
  const bb = busboy({
    headers: req.headers,
    // File names are UTF-8 (busboy's default for header parameters is latin1, which turned "é" into "Ã©").
    defParamCharset: 'utf8',
    limits: { fileSize: FILE_LIMIT_BYTES + 1, files: 10, fields: 20, fieldSize: 64 * 1024 },
  });
  const fields: Record<string, string> = {};
  const queue: IncomingFile[] = [];
  let done = false;
  let failure: Error | null = null;
  /** The first field or file name refused by the text rule: it ends the request as a 400. */
  let refused: Error | null = null;
  let draining = false;
  let wake: (() => void) | null = null;
  let fieldsReady!: (f: Record<string, string>) => void;
  let fieldsRefused!: (err: Error) => void;
  const fieldsPromise = new Promise<Record<string, string>>((resolve, reject) => {
    fieldsReady = resolve;
    fieldsRefused = reject;
  });
  // Settled by the route's await at once; a rejection the route never reaches (it failed first) is not unhandled.
  fieldsPromise.catch(() => undefined);
  const poke = () => {
    if (refused) fieldsRefused(refused);
    else fieldsReady(fields);
    wake?.();
  };
  const refuse = (check: () => void): boolean => {
    if (refused) return true;
    try {
      check();
      return false;
    } catch (err) {
      refused = err as Error;
      poke();
      return true;
    }
  };
  bb.on('field', (name, value) => {
    if (refuse(() => checkFormField(name, value, 'text'))) return;
    fields[name] = value;
  });
  bb.on('file', (name, stream, info) => {
    if (draining || refuse(() => checkFormText(info.filename ?? 'file', `${name}.filename`, 'name'))) return void stream.resume();
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
          if (refused) throw refused;
          const next = queue.shift();
          if (next) {
            yield next;
            continue;
          }
          if (failure) throw invalidField('body', `malformed multipart (${(failure as Error).message})`);
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
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    throw invalidField(`${name}`, 'must be JSON in a multipart body');
  }
  // A NUL or a lone surrogate reaches the JSON as a \u escape: the rule of JSON bodies, under the field's name.
  checkText(parsed, name);
  return parsed;
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
