import type { IncomingMessage } from 'node:http';
import { AppError, invalidField, tooLarge } from '@svc/platform/errors';
import { readMultipart } from '@svc/platform/http/multipart';
import type { FileStorage } from '../storage/storage.js';
import { sanitizeFileName } from './file.name.js';
import { SniffingCounter } from './file.sniff.js';

export interface UploadOptions<A> {
  storage: FileStorage;
  /** Largest file accepted, in bytes: one byte more ends the upload with 413 while it streams. */
  maxBytes: number;
  /** The storage key of the file. */
  key: string;
  /**
   * Checks the form fields sent before the file (which record it belongs to, whether the caller may see it) before a
   * byte of the file is stored; its error ends the upload.
   */
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
 * Receives a multipart/form-data upload of one file (part `file`) and its fields, streaming the file into the
 * storage: busboy parses the request as it arrives, the file part goes through a counter that keeps its first bytes
 * (for the content type) into `storage.put`, and backpressure pauses the request while the storage is behind. Nothing
 * is held whole in memory. Fields must come before the file, so they are checked before anything is stored; the text
 * of every field and of the file name follows the platform's rule for multipart text (decision 0135): not UTF-8, a
 * NUL or a control character is a 400 naming the field (`file.filename` for the name) before a byte is stored.
 *
 * On any failure the stored bytes are removed, the rest of the request is read and discarded (so the client, which
 * may still be sending, gets the answer instead of a reset connection), and the promise rejects with the error.
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

    /** The reader's refusal, or the upload's own through `reader.fail`: the reader discards the rest of the request. */
    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      sniffer?.destroy(error);
      // The bytes already stored (all of them, or a partial file the storage removes itself on the stream's error).
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
          // The name passed the text rule before anything is stored; it is then sanitized for storage as before.
          fileName = sanitizeFileName(info.filename);
          const counter = new SniffingCounter();
          sniffer = counter;
          // Destroyed with the upload's error on failure, maybe before the storage listens to it: the error is reported by fail.
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
          // The file part has ended; its last bytes may still be on their way to the storage.
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
