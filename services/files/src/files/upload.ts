import type { IncomingMessage } from 'node:http';
import { AppError, invalidField, tooLarge } from '@svc/platform/errors';
import { readMultipart } from '@svc/platform/http/multipart';
import type { FileStorage } from '../storage/storage.js';
import { sanitizeFileName } from './file.name.js';
import { SniffingCounter } from './file.sniff.js';

export interface UploadOptions<A> {
  storage: FileStorage;
  /** Bytes; one more ends the upload with 413 while it streams. */
  maxBytes: number;
  key: string;
  /** Checks the fields sent before the file; its error ends the upload before a byte is stored. */
  accept: (fields: Record<string, string>) => Promise<A>;
}

export interface ReceivedFile<A> {
  accepted: A;
  fileName: string;
  size: number;
  mimeType: string;
}

const FIELD_LIMIT = 4096;

/**
 * Streams one file part into the storage with backpressure; nothing is held whole in memory. Fields come first and
 * are checked before anything is stored (decision 0135). On failure the stored bytes are removed and the rest of the
 * request is discarded, so a client still sending gets the answer.
 */
export function receiveUpload<A>(req: IncomingMessage, options: UploadOptions<A>): Promise<ReceivedFile<A>> {
  const { storage, maxBytes, key } = options;
  return new Promise<ReceivedFile<A>>((resolve, reject) => {
    const requestDone = new Promise<void>((r) => {
      if (req.readableEnded) r();
      req.once('end', r);
      req.once('close', r);
    });
    let settled = false;
    let stored: Promise<void> | undefined;
    let storing: Promise<void> | undefined;
    let sniffer: SniffingCounter | undefined;
    let fileName = '';
    let accepted: A | undefined;
    const fields: Record<string, string> = {};

    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      sniffer?.destroy(error);
      // A partial file the storage removes itself on the stream's error.
      void stored?.then(() => storage.delete(key)).catch(() => undefined);
      void requestDone.then(() => reject(error));
    };
    const refuse = (err: unknown) => reader.fail(err instanceof AppError ? err : invalidField('body', 'the upload could not be read'));

    const reader = readMultipart(
      req,
      // Every field of an upload is an identifier: the text rule of JSON bodies, and no control characters.
      { limits: { fileSize: maxBytes, files: 1, fields: 20, fieldSize: FIELD_LIMIT }, fieldKind: 'name' },
      {
        field: (name, value) => {
          if (storing) return reader.fail(invalidField(name, 'fields must come before the file'));
          fields[name] = value;
        },
        file: (name, stream, info) => {
          if (name !== 'file') {
            stream.resume();
            return reader.fail(invalidField(name, 'unexpected file part; send the file as the part named file'));
          }
          fileName = sanitizeFileName(info.filename);
          const counter = new SniffingCounter();
          sniffer = counter;
          // May be destroyed before the storage listens: fail reports the error.
          counter.on('error', () => undefined);
          stream.on('limit', () => reader.fail(tooLarge(`file: larger than the limit of ${maxBytes} bytes`)));
          const asked = { ...fields };
          storing = Promise.resolve()
            .then(() => options.accept(asked))
            .then(
              (a) => {
                if (settled) return;
                accepted = a;
                stream.pipe(counter);
                stored = storage.put(key, counter);
                return stored;
              },
              (err: unknown) => {
                stream.resume();
                throw err;
              },
            );
          storing.catch(refuse);
        },
        error: fail,
        close: () => {
          if (settled) return;
          if (!storing || !sniffer) return reader.fail(invalidField('file', 'required (a part named file)'));
          const counter = sniffer;
          const finish = async () => {
            await storing;
            if (settled) return;
            const mimeType = await counter.contentType();
            if (settled) return;
            settled = true;
            resolve({ accepted: accepted as A, fileName, size: counter.bytes, mimeType });
          };
          finish().catch(refuse);
        },
      },
    );
    req.on('aborted', () => reader.fail(invalidField('body', 'the upload was interrupted')));
  });
}
