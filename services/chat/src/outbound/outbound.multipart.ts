import type { IncomingMessage } from 'node:http';
import { invalidField } from '@svc/platform/errors';
import { checkText } from '@svc/platform/http/body';
import { isMultipart, readMultipart as readForm } from '@svc/platform/http/multipart';
import { FILE_LIMIT_BYTES } from './outbound.schema.js';
import type { IncomingFile } from './outbound.sender.js';

interface Multipart {
  /** Resolves once the fields before the first file (or all of them) have arrived. */
  fields: Promise<Record<string, string>>;
  files: AsyncIterable<IncomingFile>;
  /** Reads whatever is left of the request and throws nothing (after a refusal). */
  drain(): void;
}

/** Read as it arrives (decision 0170): files are never buffered; fields sent after a file are not seen. */
export function readMultipart(req: IncomingMessage): Multipart {
  const fields: Record<string, string> = {};
  const queue: IncomingFile[] = [];
  let done = false;
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
  readForm(
    req,
    { limits: { fileSize: FILE_LIMIT_BYTES, files: 10, fields: 20, fieldSize: 64 * 1024 }, fieldKind: 'text' },
    {
      field: (name, value) => {
        fields[name] = value;
      },
      file: (_name, stream, info) => {
        if (draining) return void stream.resume();
        queue.push({ stream, fileName: info.filename ?? 'file', mimeType: info.mimeType });
        poke();
      },
      error: (err) => {
        refused = err;
        poke();
      },
      close: () => {
        done = true;
        poke();
      },
    },
  );
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
    throw invalidField(name, 'must be JSON in a multipart body');
  }
  // A NUL or a lone surrogate reaches the JSON as a \u escape: the rule of JSON bodies, under the field's name.
  checkText(parsed, name);
  return parsed;
};

export { isMultipart };
