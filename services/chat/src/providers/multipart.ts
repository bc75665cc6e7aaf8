import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { ProviderError } from './provider.js';

/** The file part streams as the socket takes it, never held whole; without a known size the body is chunked. */
export interface StreamedFile {
  field: string;
  stream: Readable;
  fileName: string;
  mimeType: string;
  size?: number;
}

/** A failure of the file's own stream (the caller's: an aborted request, a size limit), carried out as it was. */
export class FileSourceError extends Error {
  constructor(readonly source: unknown) {
    super(source instanceof Error ? source.message : String(source));
    this.name = 'FileSourceError';
  }
}

export interface MultipartBody {
  contentType: string;
  contentLength?: number;
  body: Readable;
}

const quoted = (value: string) => `"${value.replace(/[\r\n"\\]/g, (c) => (c === '"' ? '%22' : c === '\\' ? '\\\\' : ' '))}"`;

export function multipartBody(fields: Record<string, string>, file: StreamedFile): MultipartBody {
  const boundary = `----svc-chat-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    [
      ...Object.entries(fields).map(
        ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`,
      ),
      `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(file.field)}; filename=${quoted(file.fileName)}\r\n`,
      `Content-Type: ${file.mimeType}\r\n\r\n`,
    ].join(''),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);

  async function* parts(): AsyncGenerator<Buffer> {
    yield head;
    let sent = 0;
    const chunks = file.stream[Symbol.asyncIterator]();
    while (true) {
      let next: IteratorResult<unknown>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw new FileSourceError(err);
      }
      if (next.done) break;
      const chunk = next.value;
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      sent += buf.length;
      if (file.size !== undefined && sent > file.size)
        throw new ProviderError('unsupported', `${file.fileName}: longer than its declared ${file.size} bytes`);
      yield buf;
    }
    if (file.size !== undefined && sent !== file.size) {
      throw new ProviderError('unsupported', `${file.fileName}: ${sent} bytes read, ${file.size} declared`);
    }
    yield tail;
  }

  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: file.size === undefined ? undefined : head.length + file.size + tail.length,
    body: Readable.from(parts(), { objectMode: false, highWaterMark: 64 * 1024 }),
  };
}
